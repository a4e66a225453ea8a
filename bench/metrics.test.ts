import { expect, test } from "bun:test";
import { meanScores, percentile, scoreQuery } from "./metrics.ts";

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
