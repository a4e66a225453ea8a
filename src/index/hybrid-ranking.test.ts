import { describe, expect, test } from "bun:test";
import { fuseRankings } from "./hybrid-ranking.ts";

const cosines: Record<string, number> = { a: 0.2, b: 0.3, c: 0.5, d: 0.4 };
const similarity = (id: string) => cosines[id] ?? 0;

describe("fuseRankings (min-max over the union)", () => {
  test("ranks the union of both lists, a tool only the vectors found counting as the lexical lowest", () => {
    const lexical = [
      { id: "a", score: 0.1 },
      { id: "b", score: 0.05 },
    ];
    const fused = fuseRankings(lexical, similarity, [{ id: "c", score: 0.5 }], 0.4, 10);
    expect(fused.map((hit) => hit.id).sort()).toEqual(["a", "b", "c"]);
    // a: lexical 1, cosine (0.2 − 0.2) / 0.3 = 0; b: lexical 0, cosine 1/3; c: lexical 0, cosine 1.
    const score = Object.fromEntries(fused.map((hit) => [hit.id, hit.score]));
    expect(score.a).toBeCloseTo(0.6);
    expect(score.b).toBeCloseTo(0.4 / 3);
    expect(score.c).toBeCloseTo(0.4);
    expect(fused.map((hit) => hit.id)).toEqual(["a", "c", "b"]);
  });

  test("keeps each hit's raw lexical score and cosine, for relevance", () => {
    const fused = fuseRankings([{ id: "a", score: 0.1 }], similarity, [{ id: "d", score: 0.4 }], 0.4, 10);
    expect(fused.find((hit) => hit.id === "a")).toMatchObject({ lexical: 0.1, cosine: 0.2 });
    expect(fused.find((hit) => hit.id === "d")).toMatchObject({ lexical: 0, cosine: 0.4 });
  });

  test("the scale of the lexical scores does not matter, only their order and spacing", () => {
    const small = fuseRankings(
      [
        { id: "a", score: 0.02 },
        { id: "b", score: 0.01 },
      ],
      similarity,
      [],
      0.4,
      10,
    );
    const large = fuseRankings(
      [
        { id: "a", score: 0.8 },
        { id: "b", score: 0.4 },
      ],
      similarity,
      [],
      0.4,
      10,
    );
    expect(small.map((hit) => hit.score)).toEqual(large.map((hit) => hit.score));
    // With weight 0.4 the cosine (b 0.3 over a 0.2) cannot outweigh the whole lexical span.
    expect(large.map((hit) => hit.id)).toEqual(["a", "b"]);
  });

  test("at most `limit`, best first", () => {
    const fused = fuseRankings(
      [{ id: "a", score: 1 }],
      similarity,
      [
        { id: "b", score: 0.3 },
        { id: "c", score: 0.5 },
      ],
      0.4,
      2,
    );
    expect(fused).toHaveLength(2);
    expect(fused[0]!.score).toBeGreaterThanOrEqual(fused[1]!.score);
  });
});
