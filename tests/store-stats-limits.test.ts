import { afterAll, beforeAll, beforeEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { limitRefusalOf } from "../src/limits/call-gate.ts";
import { createSharedBuckets } from "../src/limits/shared-buckets.ts";
import { createSharedRateGate } from "../src/limits/shared-rate-gate.ts";
import { createLogger, type Logger, silentLogger } from "../src/log.ts";
import type { CallRecord } from "../src/stats/call-record.ts";
import { openSharedCallStats } from "../src/stats/shared-call-stats.ts";
import { rateBucketsOf } from "../src/store/postgres/rate-buckets.ts";
import { statsTablesOf } from "../src/store/postgres/stats-tables.ts";
import { openSharedStore, type SharedStore } from "../src/store/shared-store.ts";
import {
  POSTGRES_MISSING,
  postgresBinDir,
  startTempPostgres,
  type TempPostgres,
} from "./support/temp-postgres.ts";

// A loaded 2-core machine can be slow without anything being wrong: a generous bound, not 5 s.
setDefaultTimeout(60_000);

/**
 * The shared store's statistics and rate buckets against a real PostgreSQL (in process): replicas'
 * tallies add up exactly, a reset reaches every replica, the rows of a replica that is gone are
 * folded without losing a call, the bucket statement never gives more than the limit to many
 * connections at once, and a bucket that cannot reach the store falls back to its local share.
 */
const hasPostgres = postgresBinDir() !== undefined;
if (!hasPostgres) process.stderr.write(POSTGRES_MISSING);

const env = { MCPPROXY_STORE_KEY: randomBytes(32).toString("hex") };
const logger = createLogger({ level: "error" });
let pg: TempPostgres;
const opened: SharedStore[] = [];
const open = async () => {
  const store = await openSharedStore({ url: pg.url, shown: pg.url, env, logger });
  opened.push(store);
  return store;
};

beforeAll(async () => {
  if (hasPostgres) pg = await startTempPostgres();
});
afterAll(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => {});
  await pg?.cleanup();
});
beforeEach(async () => {
  if (!hasPostgres) return;
  const store = await open();
  await store.sql`TRUNCATE mcpproxy.tool_stats, mcpproxy.rerank_stats, mcpproxy.rate_buckets`;
});

const call = (
  tool: string,
  ms: number,
  outcome: CallRecord["outcome"] = "ok",
  principal?: string,
): CallRecord => ({
  server: "fx",
  tool,
  ms,
  outcome,
  afterSearch: false,
  ...(principal ? { principal } : {}),
  ...(outcome === "ok" ? {} : { error: `${tool} failed` }),
});

describe.if(hasPostgres)("shared call statistics", () => {
  test("every replica reads the calls of all replicas added together, latency histograms merged", async () => {
    const replicas = await Promise.all([open(), open(), open()]);
    const stats = await Promise.all(
      replicas.map((store) => openSharedCallStats(statsTablesOf(store), { refreshMs: 60_000 })),
    );
    // 100, 60 and 40 calls of one tool; replica 2 also fails twice.
    const counts = [100, 60, 40];
    stats.forEach((s, r) => {
      for (let i = 0; i < counts[r]!; i++) s.record(call("echo", 1 + ((i * 7 + r) % 50)));
    });
    stats[2]!.record(call("echo", 5, "error"));
    stats[2]!.record(call("echo", 5, "error"));
    // Written in two flushes, to check a delta adds to what is stored rather than replacing it.
    for (const s of stats) await s.flushNow();
    stats[0]!.record(call("echo", 3));
    await stats[0]!.flushNow();
    for (const s of stats) await s.refresh();
    const single = await openSharedCallStats(statsTablesOf(replicas[0]!));
    const all = [...stats, single].map((s) => s.all().find((t) => t.tool === "echo"));
    for (const figures of all) {
      expect(figures).toMatchObject({ calls: 203, successes: 201, errors: 2, lastError: "echo failed" });
    }
    expect(new Set(all.map((f) => f!.p95Ms)).size).toBe(1);
    // What replica 1 has not written yet is in its own figures at once.
    stats[1]!.record(call("echo", 2));
    expect(stats[1]!.all().find((t) => t.tool === "echo")!.calls).toBe(204);
    for (const s of [...stats, single]) await s.close();
  });

  test("a principal's figures are its own across replicas: another principal sees none of them", async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const sa = await openSharedCallStats(statsTablesOf(a));
    const sb = await openSharedCallStats(statsTablesOf(b));
    sa.record(call("echo", 1, "ok", "alice"));
    sb.record(call("echo", 1, "ok", "alice"));
    sb.record(call("add", 1, "ok", "bob"));
    await sa.flushNow();
    await sb.flushNow();
    await sa.refresh();
    expect(sa.ofPrincipal("alice")).toEqual([expect.objectContaining({ tool: "echo", calls: 2 })]);
    expect(sa.ofPrincipal("bob").map((t) => t.tool)).toEqual(["add"]);
    expect(sa.ofPrincipal("mallory")).toEqual([]);
    await sa.close();
    await sb.close();
  });

  test("a reset clears every replica's figures, and a replica's notice reaches the others", async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const subscribe = (store: SharedStore) => (handler: (subject: Record<string, unknown>) => void) =>
      store.changes.on("stats", (change) => handler(change.subject));
    const sa = await openSharedCallStats(statsTablesOf(a), { onChange: subscribe(a), refreshMs: 60_000 });
    const sb = await openSharedCallStats(statsTablesOf(b), { onChange: subscribe(b), refreshMs: 60_000 });
    sa.record(call("echo", 1));
    sb.record(call("add", 1));
    await sa.flushNow();
    await sb.flushNow();
    await sb.refresh();
    expect(
      sb
        .all()
        .map((t) => t.tool)
        .sort(),
    ).toEqual(["add", "echo"]);
    expect(await sa.resetShared({ server: "fx", tool: "echo" })).toBe(1);
    // Replica b hears of it through the store's change log (NOTIFY), with no read of its own.
    for (let i = 0; i < 100 && sb.all().some((t) => t.tool === "echo"); i++) await Bun.sleep(20);
    expect(sb.all().map((t) => t.tool)).toEqual(["add"]);
    await sa.close();
    await sb.close();
  });

  test("the rows of a replica that is gone are folded into one, and no call is lost", async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const sa = await openSharedCallStats(statsTablesOf(a));
    for (let i = 0; i < 10; i++) sa.record(call("echo", i + 1));
    await sa.close();
    await a.close(); // its replica row is gone
    const tables = statsTablesOf(b);
    const { mergeStoredTallies } = await import("../src/stats/shared-call-stats.ts");
    expect(await tables.compact(mergeStoredTallies, 0)).toBe(1);
    const rows = await b.sql<{ replica: string }[]>`SELECT replica FROM mcpproxy.tool_stats`;
    expect(rows.map((row) => row.replica)).toEqual([""]);
    const sb = await openSharedCallStats(tables);
    expect(sb.all()).toEqual([expect.objectContaining({ tool: "echo", calls: 10 })]);
    await sb.close();
  });
});

describe.if(hasPostgres)("shared rate buckets", () => {
  test("the bucket statement gives the burst, then refuses, and says when the next token comes", async () => {
    const buckets = rateBucketsOf(await open());
    const limit = { perMinute: 60, burst: 3 };
    const takes = [];
    for (let i = 0; i < 4; i++) takes.push(await buckets.take("server:t1", limit));
    expect(takes.map((t) => t.taken)).toEqual([true, true, true, false]);
    expect(takes[3]!.waitMs).toBeGreaterThan(0);
    expect(takes[3]!.waitMs).toBeLessThanOrEqual(1000);
  });

  test("many connections taking at once never get more than the bucket holds", async () => {
    const stores = await Promise.all([open(), open(), open()]);
    const limit = { perMinute: 1, burst: 25 };
    const takes = await Promise.all(
      Array.from({ length: 120 }, (_, i) => rateBucketsOf(stores[i % 3]!).take("server:race", limit)),
    );
    // 1 a minute refills nothing worth a token during the test.
    expect(takes.filter((t) => t.taken).length).toBe(25);
  });

  test("gates of three replicas sharing a bucket admit the limit in total, not per replica", async () => {
    const stores = await Promise.all([open(), open(), open()]);
    const limits = { rateLimit: { perMinute: 1, burst: 6 }, queueSize: 0, queueTimeoutMs: 0 };
    const gates = stores.map((store) => {
      const buckets = createSharedBuckets(rateBucketsOf(store), { logger });
      return createSharedRateGate("api", limits, (limit) => buckets.bucket("server:api", limit));
    });
    let admitted = 0;
    const refusals: unknown[] = [];
    for (let i = 0; i < 30; i++) {
      await gates[i % 3]!.enter().then(
        (turn) => {
          admitted++;
          turn.release();
        },
        (error: unknown) => refusals.push(error),
      );
    }
    expect(admitted).toBe(6);
    expect(limitRefusalOf(refusals[0])).toMatchObject({ server: "api", limit: "rate" });
    expect(limitRefusalOf(refusals[0])!.retryAfterMs).toBeGreaterThan(1000);
    expect(gates.reduce((sum, gate) => sum + gate.status().rejected.rate, 0)).toBe(24);
  });

  test("a waiting call gets the next token within queueTimeoutMs, as without a store", async () => {
    const buckets = createSharedBuckets(rateBucketsOf(await open()), { logger });
    // 600 a minute: a token every 100 ms.
    const gate = createSharedRateGate(
      "api",
      { rateLimit: { perMinute: 600, burst: 1 }, queueSize: 10, queueTimeoutMs: 5_000 },
      (limit) => buckets.bucket("server:wait", limit),
    );
    (await gate.enter()).release();
    const second = await gate.enter();
    expect(second.waitedMs).toBeGreaterThan(0);
    second.release();
    expect(gate.status()).toMatchObject({ queued: 0, rejected: { rate: 0, queue: 0, concurrency: 0 } });
  });

  test("with the store stopped, calls are answered from the replica's share, and the shared bucket is used again after", async () => {
    const store = await open();
    const lines: string[] = [];
    const watched: Logger = {
      ...silentLogger,
      warn: (line) => lines.push(line),
      info: (line) => lines.push(line),
      child: () => watched,
    };
    const buckets = createSharedBuckets(rateBucketsOf(store), {
      logger: watched,
      timeoutMs: 500,
      probeMs: 100,
    });
    // 1 a minute: nothing worth a token refills while the test runs.
    const limit = { perMinute: 1, burst: 4 };
    const bucket = buckets.bucket("server:down", limit);
    expect((await bucket.take()).taken).toBe(true);
    const [live] = await store.sql<{ n: string }[]>`SELECT count(*) AS n FROM mcpproxy.replicas`;
    await pg.stop();
    try {
      const during = [];
      for (let i = 0; i < 6; i++) during.push(await bucket.take());
      expect(buckets.isFallingBack()).toBe(true);
      // Never refused for the store's sake: the local share (1/replicas of the burst, at least 1)
      // gives its burst, then refuses by the rate as usual.
      expect(during[0]!.taken).toBe(true);
      expect(during.filter((t) => t.taken).length).toBeLessThanOrEqual(limit.burst);
    } finally {
      await pg.start();
    }
    for (let i = 0; i < 100 && buckets.isFallingBack(); i++) await Bun.sleep(50);
    expect(buckets.isFallingBack()).toBe(false);
    expect(lines.find((line) => line.includes("cannot be reached"))).toContain(`its 1/${live!.n} share`);
    expect(lines.some((line) => line.includes("answers again"))).toBe(true);
    // Back on the shared row, which kept its own count: 1 taken before, 3 left.
    const after = [];
    for (let i = 0; i < 4; i++) after.push((await bucket.take()).taken);
    expect(after).toEqual([true, true, true, false]);
    buckets.close();
  });
});
