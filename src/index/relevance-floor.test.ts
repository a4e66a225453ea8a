import { describe, expect, test } from "bun:test";
import { FLOOR_WORDS, relevanceFloor } from "./relevance-floor.ts";

describe("relevance floor", () => {
  test("a request of up to FLOOR_WORDS content words is held to the configured minimum", () => {
    expect(relevanceFloor("what is the weather on mars", 0.05)).toBe(0.05);
    expect(relevanceFloor("zzyzx qwfp", 0.05)).toBe(0.05);
  });

  test("past FLOOR_WORDS distinct content words the floor shrinks in proportion", () => {
    const words = Array.from({ length: FLOOR_WORDS * 4 }, (_, i) => `word${i}`).join(" ");
    expect(relevanceFloor(words, 0.05)).toBeCloseTo(0.0125, 10);
    // Stop words and repeats do not make a request longer.
    expect(relevanceFloor(`${"the of and ".repeat(50)} send email`, 0.05)).toBe(0.05);
    expect(relevanceFloor("send email ".repeat(100), 0.05)).toBe(0.05);
  });

  test("no minimum stays no minimum", () => {
    expect(relevanceFloor("anything at all", 0)).toBe(0);
  });
});
