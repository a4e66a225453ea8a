import type { RetrievedTool, RetrieveToolsResult } from "../../index/retrieve-tools.ts";
import type { CallStats } from "../../stats/call-record.ts";

/**
 * `retrieve_tools {include_metrics: true}`: each hit with how it has done through this proxy
 * (stats.db), so an agent can prefer a tool that works, as Gobby's listing shows them. A tool never
 * called gets `{calls: 0}`; with call statistics off (`mcpproxy.stats: false`) no hit gets figures
 * and a note says why.
 */
interface UsageFigures {
  calls: number;
  /** Successes out of calls, 0–1 (to three places); absent before the first call. */
  successRate?: number;
  /** The median latency in ms (within about 2%, latency-histogram.ts); absent before the first call. */
  p50Ms?: number;
}

type RetrievedWithFigures = RetrievedTool & { metrics?: UsageFigures };

/** The `metrics` of a hit in retrieve_tools' outputSchema. */
export const USAGE_FIGURES_SCHEMA = {
  type: "object",
  description:
    "With include_metrics: calls through this proxy, successRate (0-1) and p50Ms; calls 0 when never called",
  properties: {
    calls: { type: "integer" },
    successRate: { type: "number" },
    p50Ms: { type: "number" },
  },
  required: ["calls"],
} as const;

const STATS_OFF_NOTE =
  "include_metrics: call statistics are off on this proxy (mcpproxy.stats), so no usage figures are given.";

/** The result with each hit's figures, or with a note when nothing is counted. */
export function withUsageFigures(
  result: RetrieveToolsResult,
  stats: CallStats | undefined,
): RetrieveToolsResult {
  if (!stats) return { ...result, notes: [...(result.notes ?? []), STATS_OFF_NOTE] };
  const figures = new Map(stats.figuresOf(result.tools).map((t) => [`${t.server}\u0000${t.tool}`, t]));
  const tools: RetrievedWithFigures[] = result.tools.map((hit) => {
    const t = figures.get(`${hit.server}\u0000${hit.tool}`);
    const metrics: UsageFigures = t?.calls
      ? { calls: t.calls, successRate: Math.round((t.successes / t.calls) * 1000) / 1000, p50Ms: t.p50Ms }
      : { calls: 0 };
    return { ...hit, metrics };
  });
  return { ...result, tools };
}
