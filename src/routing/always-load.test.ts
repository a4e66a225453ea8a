import { describe, expect, test } from "bun:test";
import type { ToolStats } from "../stats/call-record.ts";
import { alwaysLoaded, USAGE_WINDOW_MS, usageScores } from "./always-load.ts";

const NOW = Date.parse("2026-11-24T12:00:00Z");
const figures = (tool: string, calls: number, successes: number, daysAgo = 0): ToolStats => ({
  server: "s",
  tool,
  calls,
  successes,
  isErrors: calls - successes,
  errors: 0,
  timeouts: 0,
  limited: 0,
  meanMs: 1,
  p50Ms: 1,
  p95Ms: 1,
  afterSearch: 0,
  lastCalledAt: new Date(NOW - daysAgo * 86_400_000).toISOString(),
});
const listed = ["a", "b", "c", "d", "e"].map((tool) => ({ key: `s\u0000${tool}`, name: `s__${tool}` }));

describe("which tools are always loaded", () => {
  test("the most successful calls first, failures not counted, ties to more calls then the name", () => {
    const scores = usageScores(
      [figures("a", 10, 2), figures("b", 4, 4), figures("c", 20, 0), figures("d", 5, 4), figures("e", 4, 4)],
      NOW,
    );
    expect([...alwaysLoaded(listed, scores, 3)]).toEqual(["s__d", "s__b", "s__e"]);
    expect(alwaysLoaded(listed, scores, 10).has("s__c")).toBe(false);
  });

  test("none without statistics, with a count of 0, or for tools not called in the window", () => {
    expect(alwaysLoaded(listed, new Map(), 10).size).toBe(0);
    const scores = usageScores([figures("a", 3, 3)], NOW);
    expect(alwaysLoaded(listed, scores, 0).size).toBe(0);
    const stale = usageScores([figures("a", 3, 3, USAGE_WINDOW_MS / 86_400_000 + 1)], NOW);
    expect(stale.size).toBe(0);
  });

  test("only listed tools are marked: a disabled or quarantined tool's calls give its place to the next", () => {
    const scores = usageScores([figures("a", 9, 9), figures("z", 99, 99)], NOW);
    expect([...alwaysLoaded(listed, scores, 1)]).toEqual(["s__a"]);
  });
});
