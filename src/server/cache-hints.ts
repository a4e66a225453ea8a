/**
 * Cache hints (MCP 2026-07-28, "Caching"): a modern client may keep a list or a read for `ttlMs`,
 * shared between users when `cacheScope` is `public`. A federated answer is built from several
 * upstream answers, so it may be kept no longer than the shortest of theirs, and is private when any
 * of them is. An upstream that gave no hint (a 2025 server never does) said nothing about how
 * long its answer holds, so the merged answer is not cached at all.
 *
 * Whether an answer may be shared between users is decided here and nowhere else (`scopeFor`):
 * `public` only when the endpoint gives every caller the same answer (its `Audience`) and no part
 * of the answer was private.
 */
export interface CacheHint {
  ttlMs: number;
  cacheScope: "public" | "private";
}

/**
 * Who the answers of one endpoint are for. `everyone`: every caller gets the same answer (stdio, a
 * profile's /mcp/p/<name>, /mcp when no access rule names a profile). `each-principal`: the answer
 * may differ by caller: at /mcp, while an access rule of `mcpproxy.httpAuth.access` names a
 * profile, each principal it admits is served that profile there and everyone else the whole
 * proxy, so one principal's list, resources or retrieve_tools description must never be handed to
 * another from a shared cache.
 */
export type Audience = "everyone" | "each-principal";

/** Not to be kept: the answer to a retry, or to a request that depends on what the caller sent. */
export const UNCACHED: CacheHint = { ttlMs: 0, cacheScope: "private" };

/** The one rule: `public` only for an endpoint whose callers all get the same answer, and no private part. */
export function scopeFor(
  audience: Audience,
  parts: readonly CacheHint["cacheScope"][] = [],
): CacheHint["cacheScope"] {
  return audience === "everyone" && parts.every((part) => part === "public") ? "public" : "private";
}

/** The hint of an answer the proxy makes itself (its own tools/list, server/discover). */
export function ownHint(ttlMs: number, audience: Audience): CacheHint {
  return { ttlMs, cacheScope: scopeFor(audience) };
}

/** The hint an upstream result carries, if it carries a well-formed one. */
function hintOf(result: unknown): CacheHint | undefined {
  if (!result || typeof result !== "object") return undefined;
  const { ttlMs, cacheScope } = result as Record<string, unknown>;
  if (typeof ttlMs !== "number" || !Number.isFinite(ttlMs) || ttlMs < 0) return undefined;
  if (cacheScope !== "public" && cacheScope !== "private") return undefined;
  return { ttlMs, cacheScope };
}

/**
 * The hint of an answer made of these upstream results, at an endpoint for `audience`: the
 * shortest TTL; private if any of them is, or if the endpoint's callers may get different answers.
 */
export function mergedHint(results: readonly unknown[], audience: Audience): CacheHint {
  const hints = results.map(hintOf);
  if (hints.length === 0 || hints.some((hint) => hint === undefined)) return UNCACHED;
  const known = hints as CacheHint[];
  return {
    ttlMs: Math.min(...known.map((hint) => hint.ttlMs)),
    cacheScope: scopeFor(
      audience,
      known.map((hint) => hint.cacheScope),
    ),
  };
}
