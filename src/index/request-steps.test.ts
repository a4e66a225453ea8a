import { describe, expect, test } from "bun:test";
import {
  mergeSteps,
  namesSeveralSteps,
  type Ranking,
  requestSteps,
  STEP_BEST_PLACES,
} from "./request-steps.ts";

type Hit = { id: string; score: number };
const ranking = (floor: number, ...hits: [string, number][]): Ranking<Hit> => ({
  hits: hits.map(([id, score]) => ({ id, score })),
  floor,
});
const ids = (hits: readonly Hit[]) => hits.map((hit) => hit.id);

describe("request steps", () => {
  test("a request splits at sentences and step words, and fragments too small to search are dropped", () => {
    expect(
      requestSteps("Create an index named products, then check the server health. Finally list the keys."),
    ).toEqual(["Create an index named products,", "check the server health.", "list the keys."]);
    expect(requestSteps("Send the weekly report then")).toEqual([]);
    expect(requestSteps("Get the weather for Paris")).toEqual([]);
    expect(namesSeveralSteps("Get the weather for Paris")).toBe(false);
    expect(namesSeveralSteps("Get the weather. Then book a flight")).toBe(true);
  });
});

describe("steps merged by score", () => {
  test("a tool ranks by the whole request's relative score plus its best step's", () => {
    const merged = mergeSteps(
      ranking(0, ["w1", 0.4], ["w2", 0.3], ["w3", 0.2], ["s1", 0.1]),
      [ranking(0, ["s1", 0.8], ["x", 0.4]), ranking(0, ["t1", 0.6], ["w3", 0.6])],
      10,
    );
    // s1: 0.25 + 1; w3: 0.5 + 1; w1: 1 + 0; t1: 0 + 1; w2: 0.75; x: 0.5.
    expect(ids(merged)).toEqual(["w3", "s1", "w1", "t1", "w2", "x"]);
  });

  test("the whole request's third to fifth tools are not pushed below every step's second", () => {
    const merged = mergeSteps(
      ranking(0, ["w1", 0.5], ["w2", 0.49], ["w3", 0.48], ["w4", 0.47]),
      [ranking(0, ["s1", 0.9], ["s2", 0.2]), ranking(0, ["t1", 0.9], ["t2", 0.2])],
      5,
    );
    expect(ids(merged).slice(0, 4)).toEqual(["w1", "s1", "t1", "w2"]);
    expect(ids(merged)).toContain("w3");
    expect(ids(merged)).not.toContain("s2");
  });

  test("a tool is kept when it reaches the floor of the whole request or of one step, and dropped when it reaches none", () => {
    const merged = mergeSteps(
      ranking(0.05, ["w1", 0.03], ["w2", 0.02], ["noise", 0.01]),
      [ranking(0.05, ["w1", 0.6], ["low", 0.04]), ranking(0.05, ["w2", 0.3])],
      10,
    );
    expect(ids(merged)).toEqual(["w1", "w2"]);
  });

  test("each step's best keeps a place in the first places when the whole request's tools outscore it", () => {
    const wholeTools = Array.from({ length: 12 }, (_, i) => [`w${i}`, 0.5 - i * 0.01] as [string, number]);
    // Three steps, each with a tool of its own first and every whole-request tool close behind.
    const steps = ["s0", "s1", "s2"].map((best) =>
      ranking(0, [best, 0.5], ...wholeTools.map(([id]) => [id, 0.45] as [string, number])),
    );
    const merged = ids(mergeSteps(ranking(0, ...wholeTools), steps, 30));
    expect(STEP_BEST_PLACES).toBe(10);
    expect(merged).toEqual([
      "w0",
      "w1",
      "w2",
      "w3",
      "w4",
      "w5",
      "w6",
      "s0",
      "s1",
      "s2",
      "w7",
      "w8",
      "w9",
      "w10",
      "w11",
    ]);
    // By score alone the whole request's tools hold every one of the first ten places.
    expect(ids(mergeSteps(ranking(0, ...wholeTools), steps, 30, 0)).slice(0, 10)).toEqual(
      wholeTools.slice(0, 10).map(([id]) => id),
    );
  });

  test("a step's best that misses its floor gets no place", () => {
    const wholeTools = Array.from({ length: 12 }, (_, i) => [`w${i}`, 0.5 - i * 0.01] as [string, number]);
    const steps = [
      ranking(0.05, ["weak", 0.04], ...wholeTools.map(([id]) => [id, 0.03] as [string, number])),
    ];
    expect(ids(mergeSteps(ranking(0, ...wholeTools), steps, 10))).not.toContain("weak");
  });

  test("scores keep their meaning, never rise down the list, and the limit holds", () => {
    const merged = mergeSteps(
      ranking(0, ["w1", 0.5], ["w2", 0.2]),
      [ranking(0, ["s1", 0.9], ["w2", 0.1])],
      2,
    );
    expect(merged).toEqual([
      { id: "w1", score: 0.5 },
      { id: "s1", score: 0.5 },
    ]);
  });
});
