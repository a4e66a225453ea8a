import { isSpecType, specTypeSchemas } from "@modelcontextprotocol/client";
import { scanParamHeaders } from "./param-headers.ts";
import { isPlainTextBlock } from "./plain-call-result.ts";

/**
 * What the proxy accepts of a server's results, whatever the era: a list is judged entry by entry
 * (a bad entry is left out and reported, never the whole list with it), and one bad part of a
 * tool's result does not fail the call.
 *
 * On a 2025-era connection the SDK passes results through as they are, and server-lists.ts checks
 * the tools. On a 2026-07-28 connection the SDK checks every result against the revision's strict
 * schema before anything else sees it: one malformed tool would fail the whole tools/list, and one
 * non-standard content block a whole call. So a modern result is made acceptable to the SDK first
 * (modern-wire.ts calls `acceptableModernResult` on the wire, before the SDK decodes it). A call's
 * result from a 2025 server gets the content rule below too (`acceptableCallResult`, on the same
 * wire): the proxy's own server checks every tools/call result it sends, in either era.
 *  - list entries the SDK would refuse are taken out, and noted under SKIPPED_META_KEY for
 *    listAllTools to report (and to count against the list bounds); the key is the proxy's own,
 *    whatever a server puts there is replaced;
 *  - missing or malformed cache hints (`ttlMs`, `cacheScope`) become "do not cache" (0, private);
 *  - a tools/call content block that is not one of the revision's (a type of its own, a text
 *    block without text) becomes a text block that says so and holds the block's JSON (cut at
 *    MAX_BLOCK_CHARS): the call succeeds, the agent sees what came, and the proxy's own server,
 *    which checks what it sends as strictly, can send it on. The other blocks are passed as sent.
 */
export const SKIPPED_META_KEY = "io.mcpproxy/skipped";

/** A list entry left out: why, and its size (it counts against maxToolListBytes as before). */
export interface SkippedEntry {
  problem: string;
  bytes: number;
}

export interface ModernResultOptions {
  /** Leave out tools whose x-mcp-header marks are invalid (HTTP only: the revision's rule for clients). */
  checkParamHeaders: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Why a tools/list entry is not a tool the proxy can offer (either era), or undefined. */
export function toolProblem(entry: unknown): string | undefined {
  if (entry === null || typeof entry !== "object") return "an entry that is not an object";
  const { name, inputSchema } = entry as { name?: unknown; inputSchema?: unknown };
  if (typeof name !== "string" || name === "") return "a tool without a name";
  if (inputSchema === null || typeof inputSchema !== "object" || Array.isArray(inputSchema)) {
    return `${name} (no inputSchema object)`;
  }
  return undefined;
}

/** The first thing the SDK's schema for `type` finds wrong with `value`, or undefined. */
function schemaProblem(type: "Tool" | "Prompt" | "ResourceTemplate" | "Resource", value: unknown) {
  const checked = specTypeSchemas[type]["~standard"].validate(value);
  if (checked instanceof Promise) return undefined; // the spec schemas are synchronous
  const issue = checked.issues?.[0];
  if (!issue) return undefined;
  const path = (issue.path ?? []).map((part) => String(typeof part === "object" ? part.key : part)).join(".");
  return `${path ? `${path}: ` : ""}${issue.message}`;
}

/** Why a modern server's tools/list entry cannot be offered, or undefined. */
function modernToolProblem(entry: unknown, options: ModernResultOptions): string | undefined {
  const basic = toolProblem(entry);
  if (basic) return basic;
  const tool = entry as { name: string; inputSchema: Record<string, unknown>; outputSchema?: unknown };
  const invalid = schemaProblem("Tool", entry);
  if (invalid) return `${tool.name} (${invalid})`;
  // The 2026 schema also wants `$schema` a string where given; the 2025 one lets it be anything.
  for (const schema of [tool.inputSchema, tool.outputSchema]) {
    if (isObject(schema) && schema.$schema !== undefined && typeof schema.$schema !== "string") {
      return `${tool.name} ($schema is not a string)`;
    }
  }
  if (options.checkParamHeaders) {
    const scan = scanParamHeaders(tool.inputSchema);
    if ("problem" in scan) return `${tool.name} (invalid x-mcp-header: ${scan.problem})`;
  }
  return undefined;
}

const LISTS: Record<string, { key: string; type: "Prompt" | "ResourceTemplate" | "Resource" | "Tool" }> = {
  "tools/list": { key: "tools", type: "Tool" },
  "prompts/list": { key: "prompts", type: "Prompt" },
  "resources/list": { key: "resources", type: "Resource" },
  "resources/templates/list": { key: "resourceTemplates", type: "ResourceTemplate" },
};
/** The methods whose modern results are made acceptable here. */
export const LENIENT_METHODS: ReadonlySet<string> = new Set([
  ...Object.keys(LISTS),
  "resources/read",
  "tools/call",
]);

/** A modern server's result for `method`, changed only where the SDK would refuse it. */
export function acceptableModernResult(
  method: string,
  result: unknown,
  options: ModernResultOptions,
): unknown {
  // Not an object, or not complete (input_required): the SDK judges it as it is.
  if (!isObject(result) || (result.resultType !== undefined && result.resultType !== "complete"))
    return result;
  if (result._meta !== undefined && !isObject(result._meta)) return result;
  if (method === "tools/call") return acceptableCallResult(result);
  const meta: Record<string, unknown> = { ...(result._meta as Record<string, unknown> | undefined) };
  delete meta[SKIPPED_META_KEY];
  const fixed: Record<string, unknown> = { ...result, _meta: meta, ...cacheHints(result) };
  const list = LISTS[method];
  if (!list || !Array.isArray(result[list.key])) return fixed;
  const kept: unknown[] = [];
  const skipped: SkippedEntry[] = [];
  for (const entry of result[list.key] as unknown[]) {
    const problem = list.type === "Tool" ? modernToolProblem(entry, options) : entryProblem(list.type, entry);
    if (problem)
      skipped.push({ problem: clip(problem), bytes: Buffer.byteLength(JSON.stringify(entry) ?? "") });
    else kept.push(entry);
  }
  fixed[list.key] = kept;
  meta[SKIPPED_META_KEY] = skipped;
  if (fixed.nextCursor !== undefined && typeof fixed.nextCursor !== "string") delete fixed.nextCursor;
  return fixed;
}

/** A problem as the log and the index summary show it: one line, not a page of schema errors. */
const clip = (text: string) => {
  const line = text.replace(/\s+/g, " ");
  return line.length > MAX_PROBLEM_CHARS ? `${line.slice(0, MAX_PROBLEM_CHARS - 1)}…` : line;
};
const MAX_PROBLEM_CHARS = 200;

/** The cache fields a modern complete list or read must carry: kept when valid, else "do not cache". */
function cacheHints(result: Record<string, unknown>): { ttlMs: number; cacheScope: "public" | "private" } {
  const { ttlMs, cacheScope } = result;
  const isValid = typeof ttlMs === "number" && Number.isInteger(ttlMs) && ttlMs >= 0;
  const isScope = cacheScope === "public" || cacheScope === "private";
  return isValid && isScope ? { ttlMs, cacheScope } : { ttlMs: 0, cacheScope: "private" };
}

function entryProblem(type: "Prompt" | "ResourceTemplate" | "Resource", entry: unknown): string | undefined {
  const problem = schemaProblem(type, entry);
  if (!problem) return undefined;
  return `${isObject(entry) && typeof entry.name === "string" ? entry.name : "an entry without a name"} (${problem})`;
}

/**
 * The entries left out of a modern list result. Read on a modern connection only, where the key
 * is always the proxy's own; checked all the same (a bound must not be lowered by a negative size).
 */
export function skippedIn(result: { _meta?: unknown }): SkippedEntry[] {
  const skipped = isObject(result._meta) ? result._meta[SKIPPED_META_KEY] : undefined;
  if (!Array.isArray(skipped)) return [];
  return skipped.map((entry: unknown) => {
    const { problem, bytes } = isObject(entry) ? entry : {};
    return {
      problem: typeof problem === "string" ? problem : "an entry that is not a tool",
      bytes: typeof bytes === "number" && Number.isFinite(bytes) && bytes > 0 ? bytes : 0,
    };
  });
}

/**
 * A tools/call result of either era as the proxy's own server sends it on: its content blocks that
 * are not valid ones told as text (below); the rest as sent. Not an object, or not complete
 * (input_required): judged as it is.
 */
export function acceptableCallResult(result: unknown): unknown {
  if (!isObject(result) || (result.resultType !== undefined && result.resultType !== "complete"))
    return result;
  const content = passableContent(result.content);
  return content === result.content ? result : { ...result, content };
}

/** The content block types both revisions define; any other type is a server's own. */
const BLOCK_TYPES: ReadonlySet<unknown> = new Set(["text", "image", "audio", "resource", "resource_link"]);

/** A call's content as the SDK takes it: each block that is not a valid one told as text instead. */
function passableContent(content: unknown): unknown[] {
  if (!Array.isArray(content)) return [];
  // Plain text blocks first: valid in both revisions, told without the SDK's schema.
  if (content.every((block) => isPlainTextBlock(block) || isSpecType.ContentBlock(block))) return content;
  return content.map((block) => {
    if (isSpecType.ContentBlock(block)) return block;
    const type = isObject(block) && typeof block.type === "string" ? `"${block.type}"` : "unknown";
    const json = JSON.stringify(block) ?? String(block);
    const shown = json.length > MAX_BLOCK_CHARS ? `${json.slice(0, MAX_BLOCK_CHARS)}…` : json;
    const what =
      isObject(block) && BLOCK_TYPES.has(block.type)
        ? `a malformed content block of type ${type}`
        : `a content block of type ${type} that MCP does not define`;
    return { type: "text", text: `[${what}, passed on as text: ${shown}]` };
  });
}

/** The most of an undefined content block's JSON passed on as text. */
const MAX_BLOCK_CHARS = 2_000;
