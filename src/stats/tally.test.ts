import { describe, expect, test } from "bun:test";
import type { CallRecord } from "./call-record.ts";
import { mergeStoredTallies } from "./shared-call-stats.ts";
import { add, countCall, emptyTally, figures, parseTally, type Tally } from "./tally.ts";

/** Calls of varied latency and outcome, as replicas would see them. */
function calls(count: number, seed: number): CallRecord[] {
  const outcomes = ["ok", "ok", "ok", "isError", "error", "timeout", "limited"] as const;
  return Array.from({ length: count }, (_, i) => ({
    server: "s",
    tool: "t",
    ms: ((i * 37 + seed * 101) % 997) / 3 + 0.05,
    outcome: outcomes[(i + seed) % outcomes.length]!,
    error: `failure ${seed}-${i}`,
    afterSearch: i % 3 === 0,
  }));
}

function tallyOf(records: readonly CallRecord[], startAt: number): Tally {
  const tally = emptyTally();
  records.forEach((call, i) => {
    countCall(tally, call, startAt + i);
  });
  return tally;
}

describe("tally merge", () => {
  test("tallies of three replicas added together are exactly the tally of all their calls", () => {
    const parts = [calls(400, 1), calls(250, 2), calls(333, 3)];
    // Replica 2's calls came last: its last error is the merged one.
    const starts = [1_000, 2_000, 3_000];
    const one = tallyOf(parts.flat(), 0);
    const merged = parts
      .map((part, i) => tallyOf(part, starts[i]!))
      .reduce((sum, t) => add(sum, t), emptyTally());
    const counts = (t: Tally) => ({
      ...t,
      totalMs: 0,
      lastError: undefined,
      lastErrorAt: undefined,
      lastCalledAt: 0,
    });
    expect(counts(merged)).toEqual(counts(one));
    // Sums of the same latencies in another order: equal but for the last floating-point bits.
    expect(merged.totalMs).toBeCloseTo(one.totalMs, 6);
    expect(merged.latency).toEqual(one.latency);
    expect(figures("s", "t", merged).p95Ms).toBe(figures("s", "t", one).p95Ms);
    const lastFailure = parts[2]!.findLast((c) => c.outcome !== "ok" && c.outcome !== "limited");
    expect(merged.lastError).toBe(lastFailure!.error);
    expect(merged.lastCalledAt).toBe(3_000 + parts[2]!.findLastIndex((c) => c.outcome !== "limited"));
  });

  test("the stored (JSON) merge used for the store's rows adds as the in-memory one does", () => {
    const a = tallyOf(calls(120, 4), 0);
    const b = tallyOf(calls(80, 5), 500);
    const stored = mergeStoredTallies(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
    const expected = add(structuredClone(a), b);
    expect(parseTally(JSON.stringify(stored))).toEqual(parseTally(JSON.stringify(expected)));
    // Neither side is changed by the stored merge: a row read twice must not count twice.
    expect(a).toEqual(tallyOf(calls(120, 4), 0));
  });
});
