import type {
  CallToolResult,
  InputRequiredResult,
  ReadResourceResult,
  Server,
  ServerContext,
  Tool,
} from "@modelcontextprotocol/server";
import { isInputRequiredResult, ResourceNotFoundError } from "@modelcontextprotocol/server";
import * as v from "valibot";
import { UNCACHED } from "../cache-hints.ts";
import { principalOf } from "../calls/input-rounds.ts";
import type { ClientEra } from "../client-era.ts";
import {
  isResultUri,
  PAGE_META_KEY,
  RESULTS_PREFIX,
  ResultNotFound,
  type ResultPage,
  type ResultSpill,
  readResourceAnswer,
} from "../results/result-spill.ts";
import type { StoredResult } from "../results/result-store.ts";
import { isSharedScope } from "../results/shared-results.ts";
import { RESERVED_TOOL_NAMES } from "./builtin-tools.ts";

/**
 * `read_result`: a large result's pages (result-spill.ts) for clients that do not read resources.
 * Listed whenever spilling is on, in every era: the list depends on the configuration only, never
 * on whether this session was given a result yet (the 2026-07-28 rule for lists).
 */
export const READ_RESULT = "read_result";
if (!RESERVED_TOOL_NAMES.has(READ_RESULT)) throw new Error("read_result must be a reserved tool name");

const whole = (what: string, least: number) =>
  v.optional(
    v.pipe(
      v.number(`${what} must be a whole number of at least ${least}`),
      v.integer(`${what} must be a whole number of at least ${least}`),
      v.minValue(least, `${what} must be a whole number of at least ${least}`),
    ),
  );

export const ReadResultArgs = v.object({
  uri: v.pipe(
    v.string("uri must be a string"),
    v.check(isResultUri, `uri must be a result's URI, ${RESULTS_PREFIX}<id>, as the result gave it`),
  ),
  offset: whole("offset", 0),
  length: whole("length", 1),
});

export function readResultDefinition(pageChars: number): Tool {
  return {
    name: READ_RESULT,
    title: "Read a large result",
    description:
      `A tool result too large for your context is kept as ${RESULTS_PREFIX}<id>, and you get its start and ` +
      "that URI. Read the rest here a page at a time: pass the URI and the offset the result (or the last " +
      `page) names. Up to ${pageChars} characters a page (bytes for an image or other binary data, as base64).`,
    inputSchema: {
      type: "object",
      properties: {
        uri: { type: "string", description: `The result's URI, ${RESULTS_PREFIX}<id>.` },
        offset: { type: "integer", minimum: 0, description: "Where the page starts (default 0)." },
        length: {
          type: "integer",
          minimum: 1,
          description: `How much to read (default and most: ${pageChars}).`,
        },
      },
      required: ["uri"],
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  };
}

/**
 * A page from this replica's memory, or else, for a principal's result in a team deployment, from
 * the shared store (another replica kept it, or this one's memory let it go first).
 */
async function readPage(
  spill: ResultSpill,
  uri: string,
  scope: string,
  range?: { offset?: number; length?: number },
): Promise<ResultPage | undefined> {
  try {
    return spill.read(uri, scope, range);
  } catch (error) {
    if (!(error instanceof ResultNotFound) || !spill.shared || !isSharedScope(scope)) throw error;
    return spill.shared.read(uri, scope, range);
  }
}

/** One page as a tool result: the page alone in its first block (concatenated pages are the whole), then where it sits. */
export async function readResult(
  spill: ResultSpill,
  scope: string,
  args: v.InferOutput<typeof ReadResultArgs>,
): Promise<CallToolResult> {
  try {
    const range = {
      ...(args.offset !== undefined ? { offset: args.offset } : {}),
      ...(args.length !== undefined ? { length: args.length } : {}),
    };
    const read = (await readPage(spill, args.uri, scope, range))!;
    const { page, entry } = read;
    const unit = entry.kind === "text" ? "characters" : "bytes";
    const where =
      `[mcpproxy: ${unit} ${page.offset}–${page.offset + page.length} of ${page.total}` +
      (page.nextOffset !== undefined
        ? `; next: read_result {"uri": "${RESULTS_PREFIX}${entry.id}", "offset": ${page.nextOffset}}]`
        : "; this is the end]");
    const first =
      entry.kind === "text"
        ? { type: "text" as const, text: read.data }
        : {
            type: "resource" as const,
            resource: { uri: `${RESULTS_PREFIX}${entry.id}`, mimeType: entry.mimeType, blob: read.data },
          };
    return { content: [first, { type: "text", text: where }], _meta: { [PAGE_META_KEY]: page } };
  } catch (error) {
    // Not found (ResultNotFound), a range past the end, or the shared store away (try again): said
    // to the agent, as a failed call is.
    if (error instanceof Error) return { content: [{ type: "text", text: error.message }], isError: true };
    throw error;
  }
}

/**
 * Who may read a result back: a 2025 session (its results are dropped when it closes), or, for a
 * 2026-07-28 request, which has no session, its principal (the bearer token over HTTP, else this
 * machine's user): the unguessable id then keeps apart the 2026 clients of one principal.
 */
export function resultScopes(
  server: Server,
  era: ClientEra,
  spill: ResultSpill,
): (ctx: ServerContext) => string {
  if (era === "modern") return (ctx) => `principal:${principalOf(ctx)}`;
  const scope = `session:${crypto.randomUUID()}`;
  const previous = server.onclose;
  server.onclose = () => {
    spill.store.drop(scope);
    previous?.();
  };
  return () => scope;
}

/**
 * resources/read of a results URI: the page, or undefined for any other URI (federated-resources.ts
 * goes on with it). Not this caller's is "Resource not found": -32602 with the URI in `data`, which
 * the SDK sends in both eras (2026-07-28 requires it; 2025 clients are told to accept it).
 */
export async function readResultResource(
  spill: ResultSpill,
  scope: string,
  uri: string,
  era: ClientEra,
): Promise<ReadResourceResult | undefined> {
  try {
    const read = await readPage(spill, uri, scope);
    if (!read) return undefined;
    const answer = readResourceAnswer(uri, read);
    // Another caller's is not found, and each page is the caller's own: never kept by a cache.
    return era === "modern" ? { ...answer, ...UNCACHED } : answer;
  } catch (error) {
    if (!(error instanceof ResultNotFound)) throw error;
    throw new ResourceNotFoundError(uri, error.message);
  }
}

export type KeepOut = <R extends CallToolResult | InputRequiredResult>(
  result: R,
  ctx: ServerContext,
  /**
   * Called by its own name with an outputSchema: its structuredContent stays (result-spill.ts).
   * Asked only of a large result: the definition is read from disk.
   */
  keepStructured: () => boolean,
) => Promise<R>;

/**
 * The last step of a forwarded call (after the plugins' transformToolResult, truncation included):
 * a large result kept for this caller. Off (`resultSpillBytes` 0, or no store), the result as it is.
 */
export function keepingOut(
  spill: ResultSpill | undefined,
  scopeOf: ((ctx: ServerContext) => string) | undefined,
  hasReadTool: boolean,
): KeepOut {
  return async (result, ctx, keepStructured) => {
    if (!spill || !scopeOf || isInputRequiredResult(result)) return result;
    const scope = scopeOf(ctx);
    const kept: StoredResult[] = [];
    const spilled = spill.spill(result as CallToolResult, scope, { keepStructured, hasReadTool, kept });
    // A principal's results reach the shared store before the answer: the next request may go elsewhere.
    if (kept.length > 0 && spill.shared) await spill.shared.keep(kept);
    return spilled as typeof result;
  };
}
