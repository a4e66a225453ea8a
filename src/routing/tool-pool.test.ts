import { describe, expect, test } from "bun:test";
import { createToolPool, priority } from "./tool-pool.ts";

const tool = (name: string, score: number) => ({ name, score, hash: `h-${name}`, definition: name });

describe("the registered-tool pool", () => {
  test("priority is 0.7·score + 0.3·freshness, freshness falling to 0 over 30 minutes", () => {
    expect(priority({ score: 1, touchedAt: 0 }, 0)).toBeCloseTo(1);
    expect(priority({ score: 0.5, touchedAt: 0 }, 900_000)).toBeCloseTo(0.35 + 0.15);
    expect(priority({ score: 0.5, touchedAt: 0 }, 3_600_000)).toBeCloseTo(0.35);
  });

  test("never holds more than its limit and evicts the lowest priority first, never the search that caused it", () => {
    let now = 0;
    const pool = createToolPool<string>(3, () => now);
    expect(pool.offer([tool("a", 0.9), tool("b", 0.5), tool("c", 0.4)])).toEqual({
      added: ["a", "b", "c"],
      removed: [],
    });
    now = 1_800_000; // half an hour: a, b and c have lost all freshness
    // d scores lower than every registered tool, and still stays: it is what the agent just asked for.
    expect(pool.offer([tool("d", 0.1)])).toEqual({ added: ["d"], removed: ["c"] });
    expect(
      pool
        .list()
        .map((t) => t.name)
        .sort(),
    ).toEqual(["a", "b", "d"]);
    now += 60_000;
    // b is older than d but scores higher: 0.7·0.5 + 0 = 0.35 against 0.7·0.1 + 0.3·(1 − 60/1800) = 0.36.
    expect(pool.offer([tool("e", 0.2)])).toEqual({ added: ["e"], removed: ["b"] });
    expect(pool.size).toBe(3);
  });

  test("a call or a new search refreshes a tool, so it outlives older ones of the same score", () => {
    let now = 0;
    const pool = createToolPool<string>(2, () => now);
    pool.offer([tool("a", 0.5), tool("b", 0.5)]);
    now = 600_000;
    pool.touch("a");
    now = 700_000;
    expect(pool.offer([tool("c", 0.5)]).removed).toEqual(["b"]);
    now = 800_000;
    // Retrieving a registered tool again adds nothing and refreshes it.
    expect(pool.offer([tool("c", 0.6)])).toEqual({ added: [], removed: [] });
    expect(pool.list().find((t) => t.name === "c")).toMatchObject({ score: 0.6, touchedAt: 800_000 });
  });

  test("a search that brings more than the limit keeps its best tools", () => {
    const pool = createToolPool<string>(2);
    expect(pool.offer([tool("a", 0.2), tool("b", 0.9), tool("c", 0.5)]).added).toEqual(["b", "c"]);
  });
});
