/** Benchmark figures; the retrieval metrics live with `mcpproxy eval` in src/eval. */
export { meanScores, type QueryScore, scoreQuery } from "../src/eval/retrieval-metrics.ts";

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
