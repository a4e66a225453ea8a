import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
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
  test("changes with what an agent is shown (description, schemas, title, annotations), not with _meta", () => {
    const base = hashTool(tool);
    expect(hashTool({ ...tool })).toBe(base);
    expect(hashTool({ ...tool, description: "Create an issue" })).not.toBe(base);
    expect(hashTool({ ...tool, inputSchema: { type: "object" } })).not.toBe(base);
    expect(hashTool({ ...tool, title: "New issue" })).not.toBe(base);
    expect(hashTool({ ...tool, annotations: { destructiveHint: true } })).not.toBe(base);
    expect(hashTool({ ...tool, outputSchema: { type: "object" } })).not.toBe(base);
    expect(hashTool({ ...tool, _meta: { "vendor/trace": "1" } })).toBe(base);
  });

  test("a tool without title, output schema or annotations keeps the hash of earlier releases", () => {
    const earlier = createHash("sha256")
      .update(`${tool.name}\u0000${tool.description}\u0000${JSON.stringify(tool.inputSchema)}`)
      .digest("hex");
    expect(hashTool(tool)).toBe(earlier);
  });
});

describe("toolFields title", () => {
  test("the title joins the name words, so search finds a tool by its display name", () => {
    expect(toolFields("gh", { ...tool, title: "Open a ticket" }).name).toBe("create issue Open a ticket");
  });
});
