import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { createSearchIndex } from "./search-index.ts";
import { hashTool, toolFields, withoutNegatedGuidance } from "./tool-document.ts";

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

describe("negated guidance", () => {
  test("sentences saying what a tool is not for are left out of its searchable description", () => {
    expect(
      withoutNegatedGuidance(
        "Get a single record by its id. Not for listing multiple records; use list_records instead.\nReturns JSON.",
      ),
    ).toBe("Get a single record by its id. Returns JSON.");
    expect(withoutNegatedGuidance("Do not use this tool to delete files. Reads a file.")).toBe(
      "Reads a file.",
    );
    expect(withoutNegatedGuidance("Search notes. For exact titles, call `get_note` instead.")).toBe(
      "Search notes.",
    );
    // Ordinary text that merely contains the words stays.
    expect(withoutNegatedGuidance("Lists items that are not archived. Use filters to narrow them.")).toBe(
      "Lists items that are not archived. Use filters to narrow them.",
    );
  });

  test("a sibling's 'not for listing' no longer outranks the list tool", async () => {
    const index = createSearchIndex();
    const schema = { type: "object", properties: { id: { type: "string" } } };
    await index.add([
      {
        id: "db/list_records",
        fields: toolFields("db", {
          name: "list_records",
          description: "Return records of a table.",
          inputSchema: schema,
        }),
      },
      {
        id: "db/get_record",
        fields: toolFields("db", {
          name: "get_record",
          description:
            "Return a single record of a table by id. Not for listing multiple records or listing tables; do not use it for listing.",
          inputSchema: schema,
        }),
      },
    ]);
    const hits = await index.search("listing multiple records of a table", 2);
    expect(hits[0]?.id).toBe("db/list_records");
  });
});
