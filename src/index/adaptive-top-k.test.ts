import { describe, expect, test } from "bun:test";
import { adaptiveCount, clauseCount, FALL_OFF, fallOffCount } from "./adaptive-top-k.ts";

describe("adaptive top-k", () => {
  test("keeps the hits up to the first one scoring under FALL_OFF of the best", () => {
    expect(fallOffCount([0.8, 0.7, 0.3, 0.29, 0.28])).toBe(2);
    expect(fallOffCount([0.5, 0.1, 0.09])).toBe(1);
    // Relative to the best, whatever the scale: a long request's shares are small.
    expect(fallOffCount([0.04, 0.035, 0.01])).toBe(2);
    // Exactly at the fall-off stays; a later hit above it after a drop does not come back.
    expect(fallOffCount([1, FALL_OFF, 0.2, 0.9])).toBe(2);
  });

  test("a flat list is kept whole, and an empty or all-zero one is left as it is", () => {
    expect(fallOffCount([0.6, 0.59, 0.58, 0.55, 0.5])).toBe(5);
    expect(fallOffCount([])).toBe(0);
    expect(fallOffCount([0, 0, 0])).toBe(3);
  });

  test("the fall-off is a parameter for the experiments", () => {
    expect(fallOffCount([1, 0.6, 0.4], 0.5)).toBe(2);
    expect(fallOffCount([1, 0.6, 0.4], 0.3)).toBe(3);
  });

  test("counts the clauses of a request that say at least two content words", () => {
    expect(clauseCount("create a github issue")).toBe(1);
    expect(clauseCount("send an email to the team and create a calendar event")).toBe(2);
    expect(clauseCount("read the file, count its words, then post the count to slack")).toBe(3);
    // A fragment of one word ("and more") does not count as a clause; nothing at all counts as one.
    expect(clauseCount("list open issues and more")).toBe(1);
    expect(clauseCount("")).toBe(1);
  });

  test("a precise request is cut to its best hits", () => {
    expect(adaptiveCount([0.9, 0.3, 0.25, 0.2, 0.1], "echo back a message")).toBe(1);
  });

  test("a request naming several things keeps at least one hit per clause", () => {
    const scores = [0.9, 0.3, 0.25, 0.2, 0.1];
    expect(adaptiveCount(scores, "send an email to the team and create a calendar event")).toBe(2);
    expect(adaptiveCount([0.9, 0.3], "read the file, count its words, and post the count to slack")).toBe(2);
  });

  test("a request of several steps is never cut", () => {
    const scores = [0.9, 0.3, 0.25, 0.2, 0.1];
    expect(adaptiveCount(scores, "Create an index for products. Then check the health of the cluster.")).toBe(
      5,
    );
  });
});
