import { describe, expect, test } from "bun:test";
import { hashTool, toolFields } from "./tool-document.ts";

const tool = {
  name: "createIssue",
  description: "Create a new issue",
  inputSchema: {
    type: "object",
    properties: {
      repo_name: { type: "string", description: "Repository to file it in" },
      labels: {
        type: "array",
        items: { type: "object", properties: { labelColor: { description: "Hex color" } } },
      },
      target: { anyOf: [{ type: "object", properties: { milestone_id: { type: "number" } } }] },
    },
  },
};

describe("toolFields", () => {
  test("splits names and collects nested parameter names and descriptions", () => {
    const fields = toolFields("my-github", tool);
    expect(fields.server).toBe("my github");
    expect(fields.name).toBe("create issue");
    expect(fields.description).toBe("Create a new issue");
    for (const part of [
      "repo name",
      "Repository to file it in",
      "label color",
      "Hex color",
      "milestone id",
    ]) {
      expect(fields.params).toContain(part);
    }
  });
});

describe("hashTool", () => {
  test("changes when the description or the schema changes, and only then", () => {
    const base = hashTool(tool);
    expect(hashTool({ ...tool })).toBe(base);
    expect(hashTool({ ...tool, description: "Create an issue" })).not.toBe(base);
    expect(hashTool({ ...tool, inputSchema: { type: "object" } })).not.toBe(base);
    expect(hashTool({ ...tool, annotations: { title: "x" } })).toBe(base);
  });
});
