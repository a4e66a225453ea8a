import { describe, expect, test } from "bun:test";
import { selectTopK } from "./top-k.ts";

describe("selectTopK", () => {
  test("returns the k best ids, best first, lower id first on ties", () => {
    const scores = [0, 5, 1, 5, 3, 9, 0.5];
    expect(selectTopK([1, 2, 3, 4, 5, 6], scores, 3)).toEqual([
      [5, 9],
      [1, 5],
      [3, 5],
    ]);
  });

  test("agrees with a full sort on random data", () => {
    const scores = Array.from({ length: 500 }, (_, i) => ((i * 7919) % 101) / 7);
    const ids = scores.map((_, i) => i);
    const sorted = [...ids].sort((a, b) => scores[b]! - scores[a]! || a - b);
    for (const k of [1, 10, 50, 500, 600]) {
      expect(selectTopK(ids, scores, k).map(([id]) => id)).toEqual(sorted.slice(0, k));
    }
  });

  test("k of zero gives nothing", () => {
    expect(selectTopK([1, 2], [0, 1, 2], 0)).toEqual([]);
  });
});
