import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { STATS_FILE } from "../store/sqlite/stats-db.ts";
import { openCallStats } from "./call-stats.ts";
import { statsReport } from "./stats-report.ts";
import { outcomeEvidence, PRIOR_WEIGHT, usagePrior } from "./usage-prior.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-stats-"));
  dirs.push(dir);
  return dir;
};

describe("call statistics", () => {
  test("counts each principal's own calls apart, kept across a restart and cleared by a reset", () => {
    const dir = tempDir();
    const first = openCallStats(dir, { persist: true });
    const call = { server: "s", tool: "t", ms: 2, outcome: "ok" as const, afterSearch: false };
    first.record({ ...call, principal: "oauth i alice" });
    first.record({ ...call, principal: "oauth i alice", outcome: "isError", error: "alice's own error" });
    first.record({ ...call, principal: "oauth i bob" });
    first.record(call);
    expect(first.ofPrincipal("oauth i alice")).toEqual([
      expect.objectContaining({
        server: "s",
        tool: "t",
        calls: 2,
        successes: 1,
        lastError: "alice's own error",
      }),
    ]);
    first.close();
    const second = openCallStats(dir, { persist: true });
    second.record({ ...call, principal: "oauth i alice" });
    expect(second.ofPrincipal("oauth i alice")[0]?.calls).toBe(3);
    expect(second.ofPrincipal("oauth i bob")[0]?.calls).toBe(1);
    expect(second.ofPrincipal("oauth i nobody")).toEqual([]);
    expect(second.all()[0]?.calls).toBe(5);
    second.reset({ server: "s" });
    expect(second.ofPrincipal("oauth i alice")).toEqual([]);
    second.close();
  });

  test("counts by outcome, mean and p95 from the histogram, merged with what was written before", () => {
    const dir = tempDir();
    const first = openCallStats(dir, { persist: true });
    for (let i = 0; i < 19; i++)
      first.record({ server: "s", tool: "t", ms: 1, outcome: "ok", afterSearch: i < 5 });
    first.record({
      server: "s",
      tool: "t",
      ms: 1000,
      outcome: "timeout",
      error: "too slow",
      afterSearch: false,
    });
    first.close();
    const second = openCallStats(dir, { persist: true });
    second.record({ server: "s", tool: "t", ms: 1, outcome: "isError", error: "bad", afterSearch: false });
    const [t] = second.all();
    expect(t).toMatchObject({
      calls: 21,
      successes: 19,
      timeouts: 1,
      isErrors: 1,
      afterSearch: 5,
      lastError: "bad",
    });
    expect(t!.meanMs).toBeCloseTo((19 + 1000 + 1) / 21, 1);
    expect(t!.p95Ms).toBeLessThan(2); // 20 of 21 calls took 1 ms
    const report = statsReport(second.all(), { indexedTools: 3, servers: 1 });
    expect(report.totals).toMatchObject({ calls: 21, successes: 19, failures: 2 });
    expect(report.failing[0]?.successRate).toBeCloseTo(19 / 21, 3);
    expect(second.reset({ server: "s", tool: "t" })).toBe(1);
    expect(second.all()).toEqual([]);
    second.close();
  });

  test("a tally saved by an older release (power-of-two histogram) is merged into when new calls are saved", () => {
    const dir = tempDir();
    openCallStats(dir, { persist: true }).close();
    const db = new Database(join(dir, STATS_FILE));
    // 10 calls of about 1 ms and one of about 3 s, in the old buckets (bucket i: up to 2^(i/2) ms).
    const histogram = Array.from({ length: 44 }, (_, i) => (i === 0 ? 10 : i === 24 ? 1 : 0));
    const old = {
      calls: 11,
      successes: 11,
      isErrors: 0,
      errors: 0,
      timeouts: 0,
      totalMs: 3010,
      afterSearch: 0,
      lastCalledAt: 1,
      histogram,
    };
    db.query("INSERT INTO tool_stats (server, tool, tally) VALUES (?, ?, ?)").run(
      "s",
      "t",
      JSON.stringify(old),
    );
    db.close();
    const stats = openCallStats(dir, { persist: true });
    stats.record({ server: "s", tool: "t", ms: 2, outcome: "ok", afterSearch: false });
    stats.flush();
    stats.close();
    const [t] = openCallStats(dir, { persist: false }).all();
    expect(t).toMatchObject({ calls: 12, successes: 12 });
    expect(t!.p95Ms).toBeGreaterThan(1_000); // the old slow call still counts
    expect(t!.p95Ms).toBeLessThanOrEqual(4_096);
  });
});

describe("figures of a few tools", () => {
  test("are what all() says of them, saved and in memory merged, with the p50; tools never called are left out", () => {
    const dir = tempDir();
    const stats = openCallStats(dir, { persist: true });
    for (const ms of [1, 2, 3, 100])
      stats.record({ server: "s", tool: "t", ms, outcome: "ok", afterSearch: false });
    stats.record({ server: "s", tool: "u", ms: 5, outcome: "error", afterSearch: false });
    stats.flush();
    stats.record({ server: "s", tool: "t", ms: 2, outcome: "isError", afterSearch: false });
    const few = stats.figuresOf([
      { server: "s", tool: "t" },
      { server: "s", tool: "never" },
    ]);
    expect(few).toEqual(stats.all().filter((t) => t.tool === "t"));
    expect(few[0]).toMatchObject({ calls: 5, successes: 4 });
    expect(few[0]!.p50Ms).toBeGreaterThan(1.5);
    expect(few[0]!.p50Ms).toBeLessThan(2.5);
    stats.close();
  });
});

describe("usage prior", () => {
  test("never called: 0; failing tools sink with the evidence, bounded; succeeding ones do not rise", () => {
    expect(usagePrior(undefined)).toBe(0);
    expect(usagePrior({ calls: 0, successes: 0 })).toBe(0);
    const few = usagePrior({ calls: 1, successes: 0 });
    const many = usagePrior({ calls: 100, successes: 0 });
    expect(few).toBeLessThan(0);
    expect(many).toBeLessThan(few);
    expect(many).toBeGreaterThanOrEqual(-PRIOR_WEIGHT);
    expect(usagePrior({ calls: 100, successes: 100 })).toBe(0);
    expect(outcomeEvidence({ calls: 100, successes: 100 })).toBeGreaterThan(0);
  });
});
