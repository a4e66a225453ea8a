import { toolKey } from "../index/tool-naming.ts";
import type { ToolStats } from "../stats/call-record.ts";

/**
 * Which tools of the `all` list carry `"anthropic/alwaysLoad": true` in `_meta`: the ones this
 * proxy's own statistics say are used most. A client with deferred tool loading (Claude Code's
 * tool search, the model APIs' `defer_loading`) keeps those in the model's context and searches
 * for the rest.
 *
 * Used most = most successful calls (an `isError` result, a JSON-RPC error or a timeout does not
 * count: a tool that keeps failing is not worth a place in every context), among tools called in
 * the last USAGE_WINDOW_MS (a tool nobody called for a month no longer earns one). Ties go to more
 * calls, then to the public name, so the order never depends on map order.
 * No statistics (a fresh install, or `mcpproxy.stats: false`): no tool is marked. Any guess (the
 * first N by name, by server) would put tools nobody asked for into every conversation, and a
 * client that finds no mark simply searches, as it does for any server that sets none.
 */
export const ALWAYS_LOAD_META_KEY = "anthropic/alwaysLoad";
export const USAGE_WINDOW_MS = 30 * 24 * 3_600_000;

export interface UsageScore {
  successes: number;
  calls: number;
}

/** The scores of the tools that may be marked, by catalog key (server, upstream tool name). */
export function usageScores(figures: readonly ToolStats[], now: number): Map<string, UsageScore> {
  const scores = new Map<string, UsageScore>();
  for (const tool of figures) {
    if (tool.successes <= 0) continue;
    const last = Date.parse(tool.lastCalledAt);
    if (!Number.isFinite(last) || now - last > USAGE_WINDOW_MS) continue;
    scores.set(toolKey(tool), { successes: tool.successes, calls: tool.calls });
  }
  return scores;
}

/** The public names of the `count` listed tools with the best scores (see above). */
export function alwaysLoaded(
  listed: readonly { key: string; name: string }[],
  scores: ReadonlyMap<string, UsageScore>,
  count: number,
): Set<string> {
  if (count <= 0 || scores.size === 0) return new Set();
  const ranked = listed.flatMap((tool) => {
    const score = scores.get(tool.key);
    return score ? [{ name: tool.name, ...score }] : [];
  });
  ranked.sort(
    (a, b) =>
      b.successes - a.successes || b.calls - a.calls || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  return new Set(ranked.slice(0, count).map((tool) => tool.name));
}
