import type { CallToolResult, ContentBlock, ReadResourceResult } from "@modelcontextprotocol/server";
import { isLowSurrogate } from "../../plugins/builtin/truncate-output.ts";
import { FEDERATED_SCHEME } from "../federation/federated-names.ts";
import { askedRange, blobPage, type Page, textPage } from "./result-pages.ts";
import { createResultStore, type ResultStore, type StoredResult } from "./result-store.ts";

/**
 * Large results kept out of the agent's context. A tool result whose JSON is over `spillBytes`
 * has each of its large parts (a text longer than `headChars`, an image, audio or embedded resource
 * whose data is, and structuredContent) stored for the caller (result-store.ts) as
 * `mcpproxy://results/<id>`; the agent gets a text's first `headChars` characters, the sizes, the
 * URI (also as a resource_link) and how to read the rest in pages. No MCP revision (2025-11-25,
 * 2026-07-28) has a range parameter for resources/read, and the SDK's schema drops unknown params,
 * so the range travels in the URI: `?offset=N&length=M`, N and M in characters (UTF-16 code units)
 * of a text or bytes of a blob. Pages never split a surrogate pair, so concatenated they are the
 * original text exactly.
 */
export const RESULTS_PREFIX = `${FEDERATED_SCHEME}//results/`;
export const PAGE_META_KEY = "mcpproxy/page";
const CANONICAL_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export interface SpillSettings {
  spillBytes: number;
  headChars: number;
  pageChars: number;
}

/** One page of a kept result, wherever it was read from (this replica's memory or the shared store). */
export interface ResultPage {
  entry: Pick<StoredResult, "id" | "kind" | "mimeType" | "bytes">;
  page: Page;
  data: string;
}

/**
 * An upper bound on the bytes of `result`'s JSON when it holds text blocks only (a character of a
 * text is at most 6 bytes escaped, `\uXXXX`; a block's keys and quotes well under 64), or Infinity:
 * a result this bound calls small is small without being serialized to see.
 */
export function textBound(result: CallToolResult): number {
  let bound = 64;
  for (const key in result) {
    if (key !== "content" && key !== "isError") return Number.POSITIVE_INFINITY;
  }
  if (!Array.isArray(result.content)) return Number.POSITIVE_INFINITY;
  for (const block of result.content) {
    if (block?.type !== "text" || typeof block.text !== "string" || Object.keys(block).length !== 2)
      return Number.POSITIVE_INFINITY;
    bound += 64 + 6 * block.text.length;
  }
  return bound;
}

/** Kept results in the shared store of a team deployment (shared-results.ts): any replica reads them. */
export interface SharedResults {
  /** Writes what a call kept for a principal to the store (bounded wait; memory alone if it fails). */
  keep(entries: readonly StoredResult[]): Promise<void>;
  /** A page of a result another replica kept; ResultNotFound when the store has none for `scope`. */
  read(uri: string, scope: string, range?: { offset?: number; length?: number }): Promise<ResultPage>;
  sweep(): Promise<void>;
}

export interface ResultSpill {
  readonly settings: SpillSettings;
  readonly store: ResultStore;
  /** With a shared store: where 2026-07-28 clients' results are kept too (their principal's scope). */
  readonly shared?: SharedResults | undefined;
  /**
   * The result as the agent gets it. `keepStructured`: a tool called by its own name that declares
   * an outputSchema must answer with structuredContent that fits it, so there it stays.
   * `hasReadTool`: whether to point at read_result (not in passthrough, which lists no proxy tool).
   */
  spill(
    result: CallToolResult,
    scope: string,
    how: { keepStructured: () => boolean; hasReadTool: boolean; kept?: StoredResult[] },
  ): CallToolResult;
  /** One page of a stored result, or undefined for a URI that is not a result's. Throws when not found. */
  read(uri: string, scope: string, range?: { offset?: number; length?: number }): ResultPage | undefined;
}

export function isResultUri(uri: string): boolean {
  return uri.startsWith(RESULTS_PREFIX);
}

export function lineCount(text: string): number {
  if (text === "") return 0;
  let lines = 1;
  for (let at = text.indexOf("\n"); at >= 0 && at < text.length - 1; at = text.indexOf("\n", at + 1)) lines++;
  return lines;
}

/** `text` cut at `end` or one before, never between the halves of a surrogate pair. */
function cutAt(text: string, end: number): number {
  return end > 0 && end < text.length && isLowSurrogate(text, end) ? end - 1 : end;
}

export function createResultSpill(
  settings: SpillSettings,
  store: ResultStore,
  shared?: SharedResults,
): ResultSpill {
  /** What the spill under way kept (its caller writes it to the shared store). */
  let keeping: StoredResult[] | undefined;
  const uriOf = (entry: StoredResult) => `${RESULTS_PREFIX}${entry.id}`;
  const until = (entry: StoredResult) => new Date(entry.expiresAt).toISOString().replace(/\.\d+Z$/, "Z");
  const howToRead = (entry: StoredResult, from: number, hasReadTool: boolean) => {
    const uri = uriOf(entry);
    const unit = entry.kind === "text" ? "characters" : "bytes";
    const viaResource = `resources/read of ${uri}?offset=${from}&length=${settings.pageChars}`;
    return (
      `Read the rest in pages of up to ${settings.pageChars} ${unit}, from ${from}: ` +
      (hasReadTool
        ? `call read_result {"uri": "${uri}", "offset": ${from}}, or ${viaResource}`
        : viaResource) +
      `. Each page says where the next starts. Only you can read it, until ${until(entry)}.`
    );
  };
  const link = (entry: StoredResult, name: string): ContentBlock => ({
    type: "resource_link",
    uri: uriOf(entry),
    name,
    mimeType: entry.mimeType,
    size: entry.bytes,
  });
  const tooLarge = (what: string, bytes: number) => ({
    type: "text" as const,
    text: `[mcpproxy: ${what} (${bytes} bytes) is larger than this proxy keeps for a session (resultSessionBytes); only what is shown reached you.]`,
  });

  function spillText(
    text: string,
    scope: string,
    mimeType: string,
    what: string,
    hasReadTool: boolean,
    headChars = settings.headChars,
  ): ContentBlock[] {
    const headEnd = cutAt(text, headChars);
    const head = { type: "text" as const, text: text.slice(0, headEnd) };
    const entry = store.put(scope, { kind: "text", data: text, mimeType });
    if (!entry) return [...(headEnd > 0 ? [head] : []), tooLarge(what, Buffer.byteLength(text))];
    keeping?.push(entry);
    const note =
      `[mcpproxy: ${what} is ${entry.bytes} bytes, ${text.length} characters, ${lineCount(text)} lines; ` +
      `${headEnd > 0 ? `its first ${headEnd} characters are above, ` : ""}the whole of it is ${uriOf(entry)}. ` +
      `${howToRead(entry, headEnd, hasReadTool)}]`;
    return [...(headEnd > 0 ? [head] : []), { type: "text", text: note }, link(entry, what)];
  }

  function spillBlob(
    data: string,
    scope: string,
    mimeType: string,
    what: string,
    hasReadTool: boolean,
  ): ContentBlock[] {
    // Canonical base64 (no line breaks or other stray characters), so pages can be cut from it directly.
    const canonical = CANONICAL_BASE64.test(data) ? data : Buffer.from(data, "base64").toString("base64");
    const entry = store.put(scope, { kind: "blob", data: canonical, mimeType });
    if (!entry) return [tooLarge(what, Buffer.byteLength(data, "base64"))];
    keeping?.push(entry);
    const note = `[mcpproxy: ${what} (${mimeType}, ${entry.bytes} bytes) is ${uriOf(entry)}. ${howToRead(entry, 0, hasReadTool)}]`;
    return [{ type: "text", text: note }, link(entry, what)];
  }

  function spillLarge(
    result: CallToolResult,
    scope: string,
    keepStructured: () => boolean,
    hasReadTool: boolean,
  ): CallToolResult {
    const isLarge = (data: string) => data.length > settings.headChars;
    const content = (result.content ?? []).flatMap((block, i): ContentBlock[] => {
      const what = `block ${i} of this result`;
      if (block.type === "text" && isLarge(block.text))
        return spillText(block.text, scope, "text/plain", what, hasReadTool);
      if ((block.type === "image" || block.type === "audio") && isLarge(block.data))
        return spillBlob(block.data, scope, block.mimeType, `the ${block.type} in ${what}`, hasReadTool);
      if (block.type === "resource") {
        const { resource } = block;
        const mimeType = resource.mimeType ?? "application/octet-stream";
        const named = `the resource ${resource.uri} in ${what}`;
        if ("text" in resource && isLarge(resource.text))
          return spillText(resource.text, scope, mimeType, named, hasReadTool);
        if ("blob" in resource && isLarge(resource.blob))
          return spillBlob(resource.blob, scope, mimeType, named, hasReadTool);
      }
      return [block];
    });
    const spilled: CallToolResult = { ...result, content };
    if (result.structuredContent !== undefined && !keepStructured()) {
      const json = JSON.stringify(result.structuredContent);
      if (isLarge(json)) {
        delete spilled.structuredContent;
        // No head: a tool's text blocks mostly say the same, and the first are kept above.
        content.push(
          ...spillText(json, scope, "application/json", "this result's structuredContent", hasReadTool, 0),
        );
      }
    }
    return spilled;
  }

  return {
    settings,
    store,
    shared,
    spill(result, scope, { keepStructured, hasReadTool, kept }) {
      if (
        settings.spillBytes <= 0 ||
        textBound(result) <= settings.spillBytes ||
        Buffer.byteLength(JSON.stringify(result)) <= settings.spillBytes
      )
        return result;
      keeping = kept;
      try {
        return spillLarge(result, scope, keepStructured, hasReadTool);
      } finally {
        keeping = undefined;
      }
    },
    read(uri, scope, range = {}) {
      if (!isResultUri(uri)) return undefined;
      const asked = askedRange(uri, RESULTS_PREFIX, range, settings.pageChars);
      const entry = store.get(scope, asked.id);
      if (!entry) throw new ResultNotFound(uri);
      if (entry.kind === "text") {
        const { page, data } = textPage(entry.data, 0, entry.data.length, asked);
        return { entry, page, data };
      }
      // Only the 4-character groups (3 bytes each) that hold the page are decoded, not the whole blob.
      const first = Math.floor(asked.offset / 3);
      const last = Math.ceil(Math.min(entry.bytes, asked.offset + asked.length) / 3);
      const groups = Buffer.from(entry.data.slice(first * 4, last * 4), "base64");
      return { entry, ...blobPage(groups, first * 3, entry.bytes, asked) };
    },
  };
}

/** Expired, evicted, never made, or another caller's: one answer for all, so a URI tells nothing. */
export class ResultNotFound extends Error {
  constructor(readonly uri: string) {
    super(`No stored result ${uri}: it expired, was evicted, or is not this session's`);
  }
}

/** A page as resources/read answers it: the text or blob, and where it sits in `_meta`. */
export function readResourceAnswer(
  uri: string,
  read: NonNullable<ReturnType<ResultSpill["read"]>>,
): ReadResourceResult {
  const { entry, data, page } = read;
  const content =
    entry.kind === "text"
      ? { uri, mimeType: entry.mimeType, text: data }
      : { uri, mimeType: entry.mimeType, blob: data };
  return { contents: [content], _meta: { [PAGE_META_KEY]: page } };
}

/**
 * The proxy's kept results as configured, or undefined when `resultSpillBytes` is 0 (off); `shared`:
 * the shared store's (a team deployment), where principals' results are kept too.
 */
export function keptResults(
  config: {
    resultSpillBytes: number;
    resultHeadChars: number;
    resultPageChars: number;
    resultTtlMs: number;
    resultsPerSession: number;
    resultSessionBytes: number;
    resultStoreBytes: number;
  },
  shared?: SharedResults,
): ResultSpill | undefined {
  if (config.resultSpillBytes <= 0) return undefined;
  const store = createResultStore({
    ttlMs: config.resultTtlMs,
    perScope: config.resultsPerSession,
    scopeBytes: config.resultSessionBytes,
    totalBytes: config.resultStoreBytes,
  });
  return createResultSpill(
    {
      spillBytes: config.resultSpillBytes,
      headChars: config.resultHeadChars,
      pageChars: config.resultPageChars,
    },
    store,
    shared,
  );
}
