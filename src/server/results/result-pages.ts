import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { isLowSurrogate } from "../../plugins/builtin/truncate-output.ts";

/**
 * Pages of a kept result (result-spill.ts): the range a read asks for, and the page of a text or a
 * blob it gets, the same whether the result is read from this replica's memory or from a slice
 * of the shared store (shared-results.ts).
 */
export interface Page {
  offset: number;
  length: number;
  total: number;
  nextOffset?: number;
}

/** The id and the range a results URI carries (`?offset=N&length=M`); NaN for a bad number. */
function parseResultUri(uri: string, prefix: string): { id: string; offset?: number; length?: number } {
  const rest = uri.slice(prefix.length);
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

/** The id and the page a read asks for: the URI's range, or the tool's, checked and capped at `pageChars`. */
export function askedRange(
  uri: string,
  prefix: string,
  range: { offset?: number | undefined; length?: number | undefined },
  pageChars: number,
): { id: string; offset: number; length: number } {
  const parsed = parseResultUri(uri, prefix);
  const offset = range.offset ?? parsed.offset ?? 0;
  const asked = range.length ?? parsed.length ?? pageChars;
  if (!Number.isInteger(offset) || offset < 0 || !Number.isInteger(asked) || asked < 1) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      "offset must be a whole number of at least 0, length one of at least 1",
    );
  }
  return { id: parsed.id, offset, length: Math.min(asked, pageChars) };
}

function checkOffset(offset: number, total: number, unit: string): void {
  if (offset > total)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `offset ${offset} is past the end (${total} ${unit})`,
    );
}

/**
 * The page of a text of `total` characters from `window`, the part of it that starts at character
 * `base` and holds at least [offset - 1, offset + length + 1) (the whole text in memory, a slice of
 * it from the shared store). A page starts where the last ended; one that would start inside a
 * surrogate pair starts on it, and none ends inside one.
 */
export function textPage(
  window: string,
  base: number,
  total: number,
  { offset, length }: { offset: number; length: number },
): { page: Page; data: string } {
  checkOffset(offset, total, "characters");
  const cut = (end: number) => (end > 0 && end < total && isLowSurrogate(window, end - base) ? end - 1 : end);
  const start = cut(offset);
  let end = cut(Math.min(total, start + length));
  if (end === start && start < total) end = Math.min(total, start + 2);
  return { data: window.slice(start - base, end - base), page: pageOf(start, end, total) };
}

function pageOf(start: number, end: number, total: number): Page {
  return { offset: start, length: end - start, total, ...(end < total ? { nextOffset: end } : {}) };
}

/** The page of a blob of `total` bytes from `window`, its bytes from `base` on (holding the page), as base64. */
export function blobPage(
  window: Buffer,
  base: number,
  total: number,
  { offset, length }: { offset: number; length: number },
): { page: Page; data: string } {
  checkOffset(offset, total, "bytes");
  const end = Math.min(total, offset + length);
  return {
    data: window.subarray(offset - base, end - base).toString("base64"),
    page: pageOf(offset, end, total),
  };
}
