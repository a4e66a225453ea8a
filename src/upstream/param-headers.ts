import type { Tool } from "@modelcontextprotocol/client";

/**
 * `Mcp-Param-*` headers (MCP 2026-07-28, streamable HTTP "Custom Headers from Tool Parameters"):
 * a tool may mark properties of its input schema with `"x-mcp-header": "Name"`, and a client that
 * calls it over HTTP mirrors each such argument into an `Mcp-Param-Name` header, so that gateways
 * and load balancers can route on it without reading the body. The server checks header against
 * body; a tool whose marks break the rules is invalid and a client leaves it out of its list.
 *
 * The rules, as the revision states them:
 *  - the mark's value is a non-empty HTTP token (RFC 9110 §5.6.2), unique within the tool
 *    ignoring case;
 *  - only a property reached from the root through `properties` alone may carry it (not under
 *    `items`, `anyOf`, `$defs`, …), and only one of type string, integer or boolean;
 *  - a value that is not visible ASCII, or has leading or trailing spaces, is sent as
 *    `=?base64?{base64 of its UTF-8}?=`; a null or absent argument sends no header.
 */
export interface ParamHeader {
  /** The property's path from the root of the arguments. */
  path: readonly string[];
  /** The name after `Mcp-Param-`, as the tool spells it. */
  name: string;
  type: "string" | "integer" | "boolean";
}

export type ParamHeaderScan = { headers: ParamHeader[] } | { problem: string };

const PARAM_HEADER_PREFIX = "Mcp-Param-";
const MARK = "x-mcp-header";
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const MARKABLE_TYPES = new Set(["string", "integer", "boolean"]);
/** Keywords whose value is one subschema, a list of them, or a map of name to subschema. */
const ONE_SCHEMA = [
  "items",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "propertyNames",
  "contains",
  "not",
  "if",
  "then",
  "else",
];
const SCHEMA_LISTS = ["prefixItems", "anyOf", "allOf", "oneOf", "items"];
const SCHEMA_MAPS = ["patternProperties", "$defs", "definitions", "dependentSchemas"];
/** Deeper than this a schema is not searched further (a mark there is not mirrored). */
const MAX_DEPTH = 64;

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The marks of a tool's input schema, or why they make the tool invalid. */
export function scanParamHeaders(inputSchema: unknown): ParamHeaderScan {
  const headers: ParamHeader[] = [];
  const seen = new Map<string, string>();
  let problem: string | undefined;
  const where = (path: readonly string[]) => (path.length === 0 ? "the schema root" : path.join("."));

  const visit = (node: unknown, path: string[], reachable: boolean, depth: number): void => {
    if (problem !== undefined || !isObject(node) || depth > MAX_DEPTH) return;
    if (Object.hasOwn(node, MARK)) {
      const name = node[MARK];
      const type = node.type;
      if (!reachable || path.length === 0) {
        problem = `${MARK} on ${where(path)}, which is not reached through properties alone`;
      } else if (typeof name !== "string" || !TOKEN.test(name)) {
        problem = `${MARK} ${JSON.stringify(name)} on ${where(path)} is not an HTTP token`;
      } else if (typeof type !== "string" || !MARKABLE_TYPES.has(type)) {
        problem = `${MARK} ${name} is on a property of type ${String(type)} (string, integer or boolean only)`;
      } else if (seen.has(name.toLowerCase())) {
        problem = `${MARK} ${name} is given twice (also as ${seen.get(name.toLowerCase())})`;
      } else {
        seen.set(name.toLowerCase(), name);
        headers.push({ path: [...path], name, type: type as ParamHeader["type"] });
      }
      if (problem !== undefined) return;
    }
    if (isObject(node.properties)) {
      for (const [key, child] of Object.entries(node.properties))
        visit(child, [...path, key], reachable, depth + 1);
    }
    for (const keyword of ONE_SCHEMA) visit(node[keyword], [...path, keyword], false, depth + 1);
    for (const keyword of SCHEMA_LISTS) {
      const list = node[keyword];
      if (Array.isArray(list)) for (const child of list) visit(child, [...path, keyword], false, depth + 1);
    }
    for (const keyword of SCHEMA_MAPS) {
      const map = node[keyword];
      if (isObject(map))
        for (const child of Object.values(map)) visit(child, [...path, keyword], false, depth + 1);
    }
  };
  visit(inputSchema, [], true, 0);
  return problem === undefined ? { headers } : { problem };
}

/** The headers one call sends: each marked argument that is present and of its declared type. */
export function paramHeaderValues(
  headers: readonly ParamHeader[],
  args: Record<string, unknown> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const header of headers) {
    let value: unknown = args;
    for (const key of header.path)
      value = isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
    const text = asText(value, header.type);
    if (text !== undefined) out[`${PARAM_HEADER_PREFIX}${header.name}`] = encodeHeaderValue(text);
  }
  return out;
}

/** A value of the declared type as text; anything else sends no header (the server judges the body). */
function asText(value: unknown, type: ParamHeader["type"]): string | undefined {
  if (type === "string") return typeof value === "string" ? value : undefined;
  if (type === "boolean") return typeof value === "boolean" ? String(value) : undefined;
  return typeof value === "number" && Number.isSafeInteger(value) ? String(value) : undefined;
}

const BASE64_OPEN = "=?base64?";
const BASE64_CLOSE = "?=";

/**
 * The value as the header carries it: as it is when it is visible ASCII (or spaces) without
 * spaces at either end; otherwise Base64. A value that looks Base64-wrapped already, and the empty
 * value, are wrapped too, so the server never has to guess.
 */
export function encodeHeaderValue(value: string): string {
  const isPlain =
    value !== "" &&
    value.trim() === value &&
    !(value.startsWith(BASE64_OPEN) && value.endsWith(BASE64_CLOSE)) &&
    /^[\x20-\x7e]*$/.test(value);
  return isPlain ? value : `${BASE64_OPEN}${Buffer.from(value, "utf8").toString("base64")}${BASE64_CLOSE}`;
}

/**
 * The Mcp-Param-* headers of a call (param-headers.ts), read from the tool's listed input schema;
 * only for a 2026 server over streamable HTTP. Each tool's marks are read once per tool list.
 */
export function paramHeaderLookup(isMirrored: boolean) {
  let scannedFor: readonly Tool[] | undefined;
  let byTool = new Map<string, ParamHeader[]>();
  return (tools: readonly Tool[], tool: string, args: Record<string, unknown> | undefined) => {
    if (!isMirrored) return undefined;
    if (scannedFor !== tools) {
      scannedFor = tools;
      byTool = new Map();
      for (const listed of tools) {
        const scan = scanParamHeaders(listed.inputSchema);
        if ("headers" in scan && scan.headers.length > 0) byTool.set(listed.name, scan.headers);
      }
    }
    const headers = byTool.get(tool);
    return headers ? paramHeaderValues(headers, args) : undefined;
  };
}
