import { createHash } from "node:crypto";
import type { UpstreamTool } from "../upstream-tool.ts";
import { splitIdentifier } from "./tokenizer.ts";

/** The searchable text of one tool, one field per kind of evidence so each can carry its own weight. */
export interface ToolFields {
  server: string;
  /** The name split into words, then the title (a display name) when the tool has one. */
  name: string;
  description: string;
  params: string;
}

/**
 * What an agent is shown of a tool besides its name, description and input schema. Part of the
 * hash, so a change to any of them updates the stored definition that retrieve_tools returns.
 */
const SHOWN_EXTRAS = ["title", "outputSchema", "annotations"] as const;

/**
 * SHA-256 of name, description, input schema and, where present, title, output schema and
 * annotations: a changed hash means the tool must be re-indexed. Tools without the extras hash
 * as they did before the extras were added, so an upgrade re-indexes only tools that have them.
 */
export function hashTool(tool: UpstreamTool): string {
  const hash = createHash("sha256")
    .update(tool.name)
    .update("\u0000")
    .update(tool.description ?? "")
    .update("\u0000")
    .update(JSON.stringify(tool.inputSchema ?? {}));
  for (const key of SHOWN_EXTRAS) {
    if (tool[key] !== undefined) hash.update(`\u0000${key}\u0000${JSON.stringify(tool[key])}`);
  }
  return hash.digest("hex");
}

/**
 * Sentences of a description that say what a tool is *not* for ("Not for listing multiple
 * records.", "Do not use this to …", "Use list_records instead."). Read as evidence they point at
 * the wrong sibling: the get tool's "not for listing records" matches a request to list records.
 * The held-aside retrieval set gained 0.004–0.014 recall@1 without them; the public eval has none.
 */
const NEGATED_GUIDANCE = [
  /^\W*(?:not (?:for|to be used|intended|meant|suitable)|do not use|don't use|never use|avoid using|should not be used)\b/i,
  /\b(?:use|call|prefer|try)\s+(?:the\s+)?[`'"]?[\w.:/-]+[`'"]?(?:\s+tool)?\s+instead\b/i,
  /^\W*instead,?\s+(?:use|call)\b/i,
];

export function withoutNegatedGuidance(description: string): string {
  return description
    .split(/(?<=[.!?;])\s+|\n+/)
    .filter((sentence) => !NEGATED_GUIDANCE.some((pattern) => pattern.test(sentence)))
    .join(" ");
}

export function toolFields(server: string, tool: UpstreamTool): ToolFields {
  const params: string[] = [];
  collectParams(tool.inputSchema, params, 0);
  return {
    server: splitIdentifier(server),
    name:
      typeof tool.title === "string"
        ? `${splitIdentifier(tool.name)} ${tool.title}`
        : splitIdentifier(tool.name),
    description: withoutNegatedGuidance(tool.description ?? ""),
    params: params.join(" \n"),
  };
}

/** A tool as one text (server, name, description, parameters): the BM25 document and the text that is embedded. */
export function toolText(fields: ToolFields): string {
  return [fields.server, fields.name, fields.description, fields.params].join("\n");
}

/** Parameter names, titles and descriptions, nested objects and arrays included. */
function collectParams(schema: unknown, out: string[], depth: number): void {
  if (depth > 8 || schema === null || typeof schema !== "object") return;
  const node = schema as Record<string, unknown>;
  const properties = node.properties;
  if (properties && typeof properties === "object") {
    for (const [name, child] of Object.entries(properties as Record<string, unknown>)) {
      out.push(splitIdentifier(name));
      if (child && typeof child === "object") {
        const { title, description } = child as Record<string, unknown>;
        if (typeof title === "string") out.push(title);
        if (typeof description === "string") out.push(description);
      }
      collectParams(child, out, depth + 1);
    }
  }
  for (const key of ["items", "additionalProperties"]) collectParams(node[key], out, depth + 1);
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const list = node[key];
    if (Array.isArray(list)) for (const item of list) collectParams(item, out, depth + 1);
  }
}
