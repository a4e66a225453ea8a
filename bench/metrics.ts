/** Benchmark figures; the retrieval metrics live with `mcpproxy eval` in src/eval. */
import { seededRandom } from "../tests/helpers.ts";

export { meanScores, type QueryScore, scoreQuery } from "../src/eval/retrieval-metrics.ts";

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const RESAMPLES = 1000;

/**
 * The mean of `values` and its 95% percentile-bootstrap interval (1,000 resamples, seeded, so a
 * rerun prints the same interval). For a paired comparison pass the per-query differences.
 */
export function bootstrapMean(values: readonly number[]): { mean: number; low: number; high: number } {
  const n = values.length;
  if (n === 0) return { mean: Number.NaN, low: Number.NaN, high: Number.NaN };
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const random = seededRandom(42);
  const means: number[] = [];
  for (let r = 0; r < RESAMPLES; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[Math.floor(random() * n)]!;
    means.push(sum / n);
  }
  means.sort((a, b) => a - b);
  return { mean, low: means[Math.floor(RESAMPLES * 0.025)]!, high: means[Math.ceil(RESAMPLES * 0.975) - 1]! };
}
