/**
 * tools/list in pages (`cursor` in, `nextCursor` out: the same in 2025-11-25 and 2026-07-28, the
 * cursor opaque to the client and the page size the server's to choose). A page ends at PAGE_TOOLS
 * tools or PAGE_BYTES of JSON, whichever comes first, with at least one tool, so a catalog of
 * thousands of tools never makes one answer of megabytes.
 *
 * The cursor names the last tool of the page, not a position: a 2026 client holds no session and
 * may fetch the next page from another process, and a list that changed between two pages (a tool
 * approved, a server gone) goes on after that name instead of skipping or repeating what moved.
 * The client hears of the change itself with list_changed.
 */
const PAGE_TOOLS = 500;
const PAGE_BYTES = 1024 * 1024;

export interface Pageable {
  name: string;
  /** The size of its JSON. */
  bytes: number;
}

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

/** The cursor that continues after `name`. */
export function cursorAfter(name: string): string {
  return Buffer.from(JSON.stringify({ after: name })).toString("base64url");
}

/** The name a cursor continues after, or undefined when it is not one of ours. */
export function afterOf(cursor: string): string | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    const after = (parsed as { after?: unknown } | null)?.after;
    return typeof after === "string" ? after : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The page of `fixed` (the proxy's own tools, first) then `sorted` (in name order) that follows
 * `cursor`; undefined when the cursor is not one of ours.
 */
export function pageOf<T extends Pageable>(
  fixed: readonly T[],
  sorted: readonly T[],
  cursor: string | undefined,
  limits: { tools: number; bytes: number } = { tools: PAGE_TOOLS, bytes: PAGE_BYTES },
): Page<T> | undefined {
  const all = [...fixed, ...sorted];
  let start = 0;
  if (cursor !== undefined) {
    const after = afterOf(cursor);
    if (after === undefined) return undefined;
    const at = all.findIndex((item) => item.name === after);
    // Gone since (removed, renamed): the first of the sorted tools that comes after it.
    start = at >= 0 ? at + 1 : fixed.length + countBefore(sorted, after);
  }
  const items: T[] = [];
  let bytes = 0;
  for (let i = start; i < all.length && items.length < limits.tools; i++) {
    const item = all[i]!;
    if (items.length > 0 && bytes + item.bytes > limits.bytes) break;
    items.push(item);
    bytes += item.bytes;
  }
  const end = start + items.length;
  return end < all.length && items.length > 0
    ? { items, nextCursor: cursorAfter(items.at(-1)!.name) }
    : { items };
}

/** How many of `sorted` come at or before `name`. */
function countBefore(sorted: readonly Pageable[], name: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]!.name <= name) low = mid + 1;
    else high = mid;
  }
  return low;
}
