import { expect, test } from "bun:test";
import { splitGroupOf } from "./eval-catalog.ts";
import { bootstrapMean, meanScores, percentile, scoreQuery } from "./metrics.ts";

test("a group counts once, found by any of its alternatives", () => {
  const score = scoreQuery(["x", "b2", "a", "c"], [["a"], ["b1", "b2"], ["z"]]);
  expect(score.recall1).toBe(0);
  expect(score.recall5).toBeCloseTo(2 / 3);
  expect(score.mrr10).toBe(0.5);
  expect(score.all10).toBe(0);
  const idcg = 1 + 1 / Math.log2(3) + 1 / Math.log2(4);
  expect(score.ndcg10).toBeCloseTo((1 / Math.log2(3) + 1 / Math.log2(4)) / idcg);
});

test("a perfect single-tool answer scores 1 everywhere", () => {
  expect(scoreQuery(["a", "b"], [["a"]])).toEqual({
    recall1: 1,
    recall5: 1,
    recall10: 1,
    mrr10: 1,
    ndcg10: 1,
    all10: 1,
  });
  expect(meanScores([scoreQuery(["a"], [["a"]]), scoreQuery(["b"], [["a"]])]).recall1).toBe(0.5);
});

test("percentile picks the nearest rank", () => {
  expect(percentile([5, 1, 3, 2, 4], 50)).toBe(3);
  expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95)).toBe(10);
});

test("the bootstrap interval holds the mean, narrows with more queries and is the same on a rerun", () => {
  const few = Array.from({ length: 40 }, (_, i) => (i % 4 === 0 ? 0 : 1));
  const many = Array.from({ length: 4000 }, (_, i) => (i % 4 === 0 ? 0 : 1));
  const a = bootstrapMean(few);
  expect(a.mean).toBe(0.75);
  expect(a.low).toBeLessThan(0.75);
  expect(a.high).toBeGreaterThan(0.75);
  const b = bootstrapMean(many);
  expect(b.high - b.low).toBeLessThan((a.high - a.low) / 3);
  expect(bootstrapMean(few)).toEqual(a);
  expect(bootstrapMean([0.5, 0.5, 0.5])).toEqual({ mean: 0.5, low: 0.5, high: 0.5 });
});

test("the split by server puts a query with the half of its servers, or across", () => {
  const half = (server: string) => splitGroupOf([[`${server}/tool`]]);
  const servers = ["alpha", "beta", "gamma", "delta", "owner/name-mcp", "epsilon"];
  const halves = servers.map(half);
  expect(new Set(halves)).toEqual(new Set(["half A", "half B"]));
  // A server name with "/" is hashed whole, so its tools stay together.
  expect(splitGroupOf([["owner/name-mcp/a"], ["owner/name-mcp/b"]])).toBe(half("owner/name-mcp"));
  const a = servers.find((s) => half(s) === "half A")!;
  const b = servers.find((s) => half(s) === "half B")!;
  expect(splitGroupOf([[`${a}/x`], [`${b}/y`]])).toBe("cross");
});
