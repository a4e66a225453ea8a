import type { CallToolResult, ContentBlock, ReadResourceResult } from "@modelcontextprotocol/server";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { isLowSurrogate } from "../plugins/builtin/truncate-output.ts";
import { FEDERATED_SCHEME } from "./federated-names.ts";
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

export interface Page {
  offset: number;
  length: number;
  total: number;
  nextOffset?: number;
}

export interface ResultSpill {
  readonly settings: SpillSettings;
  readonly store: ResultStore;
  /**
   * The result as the agent gets it. `keepStructured`: a tool called by its own name that declares
   * an outputSchema must answer with structuredContent that fits it, so there it stays.
   * `hasReadTool`: whether to point at read_result (not in passthrough, which lists no proxy tool).
   */
  spill(
    result: CallToolResult,
    scope: string,
    how: { keepStructured: () => boolean; hasReadTool: boolean },
  ): CallToolResult;
  /** One page of a stored result, or undefined for a URI that is not a result's. Throws when not found. */
  read(
    uri: string,
    scope: string,
    range?: { offset?: number; length?: number },
  ): { entry: StoredResult; page: Page; data: string } | undefined;
}

export function isResultUri(uri: string): boolean {
  return uri.startsWith(RESULTS_PREFIX);
}

/** The id and the range a results URI carries (`?offset=N&length=M`); NaN for a bad number. */
function parseResultUri(uri: string): { id: string; offset?: number; length?: number } {
  const rest = uri.slice(RESULTS_PREFIX.length);
  const query = rest.indexOf("?");
  const id = query < 0 ? rest : rest.slice(0, query);
  const params = new URLSearchParams(query < 0 ? "" : rest.slice(query + 1));
  const number = (key: string) => {
    const value = params.get(key);
    return value === null ? undefined : /^\d+$/.test(value) ? Number(value) : Number.NaN;
  };
  const offset = number("offset");
  const length = number("length");
  return { id, ...(offset !== undefined ? { offset } : {}), ...(length !== undefined ? { length } : {}) };
}

export function lineCount(text: string): number {
  if (text === "") return 0;
  let lines = 1;
  for (let at = text.indexOf("\n"); at >= 0 && at < text.length - 1; at = text.indexOf("\n", at + 1)) lines++;
  return lines;
}

/** `text` cut at `end` or one before, never between the halves of a surrogate pair. */
export function cutAt(text: string, end: number): number {
  return end > 0 && end < text.length && isLowSurrogate(text, end) ? end - 1 : end;
}

export function createResultSpill(settings: SpillSettings, store: ResultStore): ResultSpill {
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
    const note = `[mcpproxy: ${what} (${mimeType}, ${entry.bytes} bytes) is ${uriOf(entry)}. ${howToRead(entry, 0, hasReadTool)}]`;
    return [{ type: "text", text: note }, link(entry, what)];
  }

  return {
    settings,
    store,
    spill(result, scope, { keepStructured, hasReadTool }) {
      if (settings.spillBytes <= 0 || Buffer.byteLength(JSON.stringify(result)) <= settings.spillBytes)
        return result;
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
    },
    read(uri, scope, range = {}) {
      if (!isResultUri(uri)) return undefined;
      const parsed = parseResultUri(uri);
      const entry = store.get(scope, parsed.id);
      if (!entry) throw new ResultNotFound(uri);
      const offset = range.offset ?? parsed.offset ?? 0;
      const asked = range.length ?? parsed.length ?? settings.pageChars;
      if (!Number.isInteger(offset) || offset < 0 || !Number.isInteger(asked) || asked < 1) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          "offset must be a whole number of at least 0, length one of at least 1",
        );
      }
      const length = Math.min(asked, settings.pageChars);
      if (entry.kind === "text") {
        const total = entry.data.length;
        if (offset > total)
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `offset ${offset} is past the end (${total} characters)`,
          );
        // A page starts where the last ended; one that would start inside a pair starts on it.
        const start = cutAt(entry.data, offset);
        let end = cutAt(entry.data, Math.min(total, start + length));
        if (end === start && start < total) end = Math.min(total, start + 2);
        return { entry, data: entry.data.slice(start, end), page: pageOf(start, end, total) };
      }
      if (offset > entry.bytes)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `offset ${offset} is past the end (${entry.bytes} bytes)`,
        );
      const end = Math.min(entry.bytes, offset + length);
      // Only the 4-character groups (3 bytes each) that hold the page are decoded, not the whole blob.
      const first = Math.floor(offset / 3);
      const groups = Buffer.from(entry.data.slice(first * 4, Math.ceil(end / 3) * 4), "base64");
      const bytes = groups.subarray(offset - first * 3, end - first * 3);
      return { entry, data: bytes.toString("base64"), page: pageOf(offset, end, entry.bytes) };
    },
  };
}

function pageOf(start: number, end: number, total: number): Page {
  return { offset: start, length: end - start, total, ...(end < total ? { nextOffset: end } : {}) };
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

/** The proxy's kept results as configured, or undefined when `resultSpillBytes` is 0 (off). */
export function keptResults(config: {
  resultSpillBytes: number;
  resultHeadChars: number;
  resultPageChars: number;
  resultTtlMs: number;
  resultsPerSession: number;
  resultSessionBytes: number;
  resultStoreBytes: number;
}): ResultSpill | undefined {
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
  );
}
