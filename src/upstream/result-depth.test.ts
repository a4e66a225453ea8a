import { describe, expect, test } from "bun:test";
import { isNestedDeeperThan } from "./result-depth.ts";

const nested = (depth: number): unknown => JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);

describe("isNestedDeeperThan", () => {
  test("counts arrays and objects as levels, and leaves scalars at the top alone", () => {
    expect(isNestedDeeperThan(5, 0)).toBe(false);
    expect(isNestedDeeperThan({ a: [1] }, 2)).toBe(false);
    expect(isNestedDeeperThan({ a: [{}] }, 2)).toBe(true);
    expect(isNestedDeeperThan(nested(1_000), 1_000)).toBe(false);
    expect(isNestedDeeperThan(nested(1_001), 1_000)).toBe(true);
  });

  test("reads a value 100,000 levels deep without overflowing the stack", () => {
    expect(isNestedDeeperThan({ content: [], deep: nested(100_000) }, 1_000)).toBe(true);
  });
});
