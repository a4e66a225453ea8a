import type { CallStats, ToolStats } from "./call-record.ts";

/**
 * A small, bounded prior from how tools have done (`mcpproxy.learnedPrior`, off by default): tools
 * that keep failing sink a little in search. It is at most PRIOR_WEIGHT below the 0–1 score, grows
 * with the evidence (half its size at PRIOR_EVIDENCE calls), and is 0 for a tool never called, so a
 * fresh install ranks exactly as without it.
 * Tools that succeed do not rise: in the replay of bench/experiments/prior-simulation.ts
 * letting them rise gained +0.007 recall@1 on the replayed requests but cost −0.013 on requests
 * never replayed, whose right tools, never called, were pushed down by tools that had been; sinking
 * alone gained +0.005 there and cost nothing elsewhere. docs/research/retrieval-lab-notes.md has the curves.
 */
export const PRIOR_WEIGHT = 0.05;
const PRIOR_EVIDENCE = 5;
/** How long a snapshot of the figures is used before it is read again. */
const REFRESH_MS = 1_000;

/** Between −PRIOR_WEIGHT (always failed, much evidence) and +PRIOR_WEIGHT (always succeeded); see `usagePrior`. */
export function outcomeEvidence(stats: Pick<ToolStats, "calls" | "successes"> | undefined): number {
  if (!stats || stats.calls === 0) return 0;
  const confidence = stats.calls / (stats.calls + PRIOR_EVIDENCE);
  return PRIOR_WEIGHT * confidence * ((2 * stats.successes) / stats.calls - 1);
}

/** The prior search uses: failing tools sink; none rise. */
export function usagePrior(stats: Pick<ToolStats, "calls" | "successes"> | undefined): number {
  return Math.min(0, outcomeEvidence(stats));
}

/** The prior of each tool, from figures read at most every few seconds (reading them is not free). */
export function usagePriors(
  stats: CallStats,
  now: () => number = Date.now,
  priorOf: typeof usagePrior = usagePrior,
): (server: string, tool: string) => number {
  let priors = new Map<string, number>();
  let readAt = Number.NEGATIVE_INFINITY;
  return (server, tool) => {
    if (now() - readAt > REFRESH_MS) {
      priors = new Map(stats.all().map((t) => [`${t.server}\u0000${t.tool}`, priorOf(t)]));
      readAt = now();
    }
    return priors.get(`${server}\u0000${tool}`) ?? 0;
  };
}
