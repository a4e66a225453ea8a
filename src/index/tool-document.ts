import { createHash } from "node:crypto";
import { splitIdentifier } from "./tokenizer.ts";

/** A tool as an upstream lists it (the MCP `Tool` shape, kept whole for later use). */
export interface UpstreamTool {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  [key: string]: unknown;
}

/** The searchable text of one tool, one field per kind of evidence so each can carry its own weight. */
export interface ToolFields {
  server: string;
  name: string;
  description: string;
  params: string;
}

/** SHA-256 of name, description and input schema: a changed hash means the tool must be re-indexed. */
export function hashTool(tool: UpstreamTool): string {
  return createHash("sha256")
    .update(tool.name)
    .update("\u0000")
    .update(tool.description ?? "")
    .update("\u0000")
    .update(JSON.stringify(tool.inputSchema ?? {}))
    .digest("hex");
}

export function toolFields(server: string, tool: UpstreamTool): ToolFields {
  const params: string[] = [];
  collectParams(tool.inputSchema, params, 0);
  return {
    server: splitIdentifier(server),
    name: splitIdentifier(tool.name),
    description: tool.description ?? "",
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
