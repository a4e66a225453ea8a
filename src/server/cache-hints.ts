/**
 * Cache hints (MCP 2026-07-28, "Caching"): a modern client may keep a list or a read for `ttlMs`,
 * shared between users when `cacheScope` is `public`. A federated answer is built from several
 * upstream answers, so it may be kept no longer than the shortest of theirs, and is private when any
 * of them is. An upstream that gave no hint (a 2025 server never does) said nothing about how
 * long its answer holds, so the merged answer is not cached at all.
 */
export interface CacheHint {
  ttlMs: number;
  cacheScope: "public" | "private";
}

/** Not to be kept: the answer to a retry, or to a request that depends on what the caller sent. */
export const UNCACHED: CacheHint = { ttlMs: 0, cacheScope: "private" };

/** The hint an upstream result carries, if it carries a well-formed one. */
export function hintOf(result: unknown): CacheHint | undefined {
  if (!result || typeof result !== "object") return undefined;
  const { ttlMs, cacheScope } = result as Record<string, unknown>;
  if (typeof ttlMs !== "number" || !Number.isFinite(ttlMs) || ttlMs < 0) return undefined;
  if (cacheScope !== "public" && cacheScope !== "private") return undefined;
  return { ttlMs, cacheScope };
}

/** The hint of an answer made of these upstream results: the shortest TTL, private if any is. */
export function mergedHint(results: readonly unknown[]): CacheHint {
  if (results.length === 0) return UNCACHED;
  let merged: CacheHint | undefined;
  for (const result of results) {
    const hint = hintOf(result);
    if (!hint) return UNCACHED;
    merged = merged
      ? {
          ttlMs: Math.min(merged.ttlMs, hint.ttlMs),
          cacheScope: merged.cacheScope === "private" || hint.cacheScope === "private" ? "private" : "public",
        }
      : hint;
  }
  return merged ?? UNCACHED;
}
