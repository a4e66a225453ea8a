import { describe, expect, test } from "bun:test";
import { emptyHistogram, fromStored, merge, observe, percentile } from "./latency-histogram.ts";

/** A seeded generator in [0, 1) (a linear congruential one), so a failure replays. */
const seeded = (seed: number) => () => {
  seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0;
  return seed / 4_294_967_296;
};

const exactPercentile = (values: number[], fraction: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)]!;
};

describe("latency histogram", () => {
  test("one call's p95 is that call, not the bucket's bound (3,013 ms was shown as 4,096)", () => {
    const histogram = emptyHistogram();
    observe(histogram, 3013);
    expect(percentile(histogram, 0.95)).toBe(3013);
  });

  test("the p95 of spread-out latencies is within 3% of the exact one and never above the slowest", () => {
    const random = seeded(7);
    for (let round = 0; round < 50; round++) {
      const histogram = emptyHistogram();
      const values: number[] = [];
      const calls = 1 + Math.floor(random() * 400);
      for (let i = 0; i < calls; i++) {
        const ms = Math.exp(random() * 12) / 10; // 0.1 ms … 16 s
        values.push(ms);
        observe(histogram, ms);
      }
      const exact = exactPercentile(values, 0.95);
      const shown = percentile(histogram, 0.95);
      expect(Math.abs(shown - exact) / exact).toBeLessThan(0.03);
      expect(shown).toBeLessThanOrEqual(Math.max(...values));
      expect(shown).toBeGreaterThanOrEqual(Math.min(...values));
    }
  });

  test("merges figures from disk and memory, and reads the first format's power-of-two buckets", () => {
    const a = emptyHistogram();
    const b = emptyHistogram();
    for (let i = 0; i < 19; i++) observe(a, 10);
    observe(b, 500);
    const merged = merge(fromStored(JSON.parse(JSON.stringify(a))), b);
    expect(merged).toMatchObject({ minMs: 10, maxMs: 500 });
    expect(percentile(merged, 0.95)).toBeCloseTo(10, 0);
    expect(percentile(merged, 1)).toBe(500);
    // 3 calls in the old bucket 24 (up to 4096 ms): read at that bound, as that p95 reported them.
    const legacy = fromStored([...new Array(24).fill(0), 3, ...new Array(19).fill(0)]);
    expect(Math.abs(percentile(legacy, 0.95) - 4096) / 4096).toBeLessThan(0.03);
    expect(percentile(emptyHistogram(), 0.95)).toBe(0);
  });
});
