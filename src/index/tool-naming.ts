import { createHash } from "node:crypto";

/**
 * Public tool names are `server__tool`, restricted to `[A-Za-z0-9_-]` and at most `limit` long.
 * A name that had to be changed (bad characters) and then collides, or one that is too long,
 * gets a short hash suffix derived from the original (server, tool) pair, so the same set of
 * tools always gets the same names and the mapping back is exact (it is stored, not parsed).
 * A name that needed no change keeps it even in a collision; only the altered ones move.
 */
export interface ToolRef {
  server: string;
  tool: string;
}

export const NAME_SEPARATOR = "__";
const HASH_LENGTHS = [6, 10, 16] as const;

export function toolKey(ref: ToolRef): string {
  return `${ref.server}\u0000${ref.tool}`;
}

function sanitizeNamePart(part: string): string {
  return memoized(`s\u0000${part}`, () => part.replace(/[^A-Za-z0-9_-]/g, "_"));
}

/**
 * Names are recomputed over every tool whenever one server's tools change, so the per-tool work
 * (sanitizing, hashing) is memoized: at 10k tools on 2k servers, recomputing it made indexing
 * quadratic (47 s). Bounded so a long-running proxy cannot grow it without limit.
 */
const MEMO_LIMIT = 200_000;
const memo = new Map<string, string>();
function memoized(key: string, compute: () => string): string {
  let value = memo.get(key);
  if (value === undefined) {
    if (memo.size >= MEMO_LIMIT) memo.clear();
    value = compute();
    memo.set(key, value);
  }
  return value;
}

function shortHash(ref: ToolRef, length: number): string {
  return memoized(`h${length}\u0000${toolKey(ref)}`, () =>
    createHash("sha256").update(toolKey(ref)).digest("hex").slice(0, length),
  );
}

function withSuffix(base: string, ref: ToolRef, limit: number, length: number): string {
  return `${base.slice(0, Math.max(1, limit - length - 1))}_${shortHash(ref, length)}`;
}

/**
 * Returns the public name of every tool, keyed by `toolKey`. `shownAs`, a person's rename
 * (tool-overrides.ts), takes the place of the tool part and follows the same rules; the hash of a
 * suffix still comes from the upstream's own name, so two tools renamed alike stay apart.
 */
export function assignToolNames(
  refs: readonly (ToolRef & { shownAs?: string | undefined })[],
  limit: number,
  reserved: ReadonlySet<string> = new Set(),
): Map<string, string> {
  const candidates = refs.map((ref) => {
    const tool = ref.shownAs ?? ref.tool;
    const raw = `${ref.server}${NAME_SEPARATOR}${tool}`;
    const base = `${sanitizeNamePart(ref.server)}${NAME_SEPARATOR}${sanitizeNamePart(tool)}`;
    return { ref, base, isExact: base === raw };
  });
  const byBase = new Map<string, typeof candidates>();
  for (const candidate of candidates) {
    const group = byBase.get(candidate.base) ?? [];
    group.push(candidate);
    byBase.set(candidate.base, group);
  }

  const names = new Map<string, string>();
  const taken = new Set<string>(reserved);
  const pending: typeof candidates = [];
  for (const group of byBase.values()) {
    const exact = group.filter((c) => c.isExact);
    // An unaltered name keeps its base when it is the only unaltered one in the collision.
    const keeper = exact.length === 1 ? exact[0] : group.length === 1 ? group[0] : undefined;
    for (const candidate of group) {
      const fits = candidate.base.length <= limit && !reserved.has(candidate.base);
      if (candidate === keeper && fits) {
        names.set(toolKey(candidate.ref), candidate.base);
        taken.add(candidate.base);
      } else {
        pending.push(candidate);
      }
    }
  }
  // Code-unit order: deterministic everywhere, and far cheaper than localeCompare on 10k names.
  const order = (c: (typeof candidates)[number]) => toolKey(c.ref);
  pending.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
  for (const candidate of pending) {
    let name = "";
    for (const length of HASH_LENGTHS) {
      name = withSuffix(candidate.base, candidate.ref, limit, length);
      if (!taken.has(name)) break;
    }
    names.set(toolKey(candidate.ref), name);
    taken.add(name);
  }
  return names;
}
