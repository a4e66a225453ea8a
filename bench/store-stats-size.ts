#!/usr/bin/env bun
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { silentLogger } from "../src/log.ts";
import type { CallRecord } from "../src/stats/call-record.ts";
import { openSharedCallStats, type SharedCallStats } from "../src/stats/shared-call-stats.ts";
import { statsTablesOf } from "../src/store/postgres/stats-tables.ts";
import { openSharedStore, type SharedStore } from "../src/store/shared-store.ts";
import { startTempPostgres } from "../tests/support/temp-postgres.ts";

/**
 * How big the shared store's statistics get: three replicas record calls to 10,000 tools through
 * the real recorder (shared-call-stats.ts), flush them into a temporary PostgreSQL, and the size of
 * `mcpproxy.tool_stats` (pg_total_relation_size: table, index, TOAST) is read after each million
 * calls. A row is a tally (counts and a sparse latency histogram), so the table grows with tools ×
 * replicas, not with calls: the second million changes the figures in the rows, not their number.
 * Also reported: how long a flush of every tool takes, and a full read and merge of the rows.
 *
 *   bun bench/store-stats-size.ts [--tools 10000] [--calls 1000000] [--replicas 3] [--rounds 2]
 */
const { values } = parseArgs({
  options: {
    tools: { type: "string", default: "10000" },
    calls: { type: "string", default: "1000000" },
    replicas: { type: "string", default: "3" },
    rounds: { type: "string", default: "2" },
  },
});
const tools = Number(values.tools);
const callsPerRound = Number(values.calls);
const replicaCount = Number(values.replicas);
const rounds = Number(values.rounds);

/** A deterministic spread: a few tools get most calls (Zipf-like), latencies over ~6 octaves. */
function* callsOf(count: number, seed: number): Generator<CallRecord> {
  let state = seed;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
  for (let i = 0; i < count; i++) {
    // Every tool once, then log-uniform ranks: tool 0 gets the most.
    const tool = i < tools ? i : Math.min(tools - 1, Math.floor(tools ** next()) - 1);
    const r = next();
    yield {
      server: `server-${tool % 100}`,
      tool: `tool-${tool}`,
      ms: 2 ** (next() * 6) * 2,
      outcome: r < 0.9 ? "ok" : r < 0.95 ? "isError" : r < 0.98 ? "error" : "timeout",
      ...(r >= 0.9 ? { error: `failure ${tool}` } : {}),
      afterSearch: r < 0.5,
    };
  }
}

const pg = await startTempPostgres();
const env = { MCPPROXY_STORE_KEY: randomBytes(32).toString("hex") };
const stores: SharedStore[] = [];
const stats: SharedCallStats[] = [];
try {
  for (let r = 0; r < replicaCount; r++) {
    const store = await openSharedStore({ url: pg.url, shown: "bench", env, logger: silentLogger });
    stores.push(store);
    stats.push(await openSharedCallStats(statsTablesOf(store), { flushMs: 3_600_000, refreshMs: 3_600_000 }));
  }
  const sql = stores[0]!.sql;
  const size = async () => {
    const [row] = await sql<{ bytes: string; rows: string }[]>`
      SELECT pg_total_relation_size('mcpproxy.tool_stats') AS bytes, (SELECT count(*) FROM mcpproxy.tool_stats) AS rows`;
    return { bytes: Number(row!.bytes), rows: Number(row!.rows) };
  };
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;
  say(`${tools} tools, ${replicaCount} replicas, ${callsPerRound} calls a round (PostgreSQL ${pg.url})`);
  for (let round = 1; round <= rounds; round++) {
    const perReplica = Math.ceil(callsPerRound / replicaCount);
    let recordMs = 0;
    let flushMs = 0;
    for (const [r, s] of stats.entries()) {
      const started = performance.now();
      for (const call of callsOf(perReplica, round * 1_000 + r + 1)) s.record(call);
      recordMs += performance.now() - started;
      const flushStarted = performance.now();
      await s.flushNow();
      flushMs += performance.now() - flushStarted;
    }
    const readStarted = performance.now();
    await stats[0]!.refresh(true);
    const figures = stats[0]!.all();
    const readMs = performance.now() - readStarted;
    const total = figures.reduce((sum, t) => sum + t.calls, 0);
    const { bytes, rows } = await size();
    say(
      `after ${round * callsPerRound} calls: tool_stats ${mb(bytes)} (${bytes} bytes, ${rows} rows, ` +
        `${Math.round(bytes / rows)} bytes a row); merged figures count ${total} calls over ${figures.length} tools; ` +
        `recording ${((recordMs / (perReplica * replicaCount)) * 1000).toFixed(2)} µs a call, flush of every tool ${Math.round(flushMs / replicaCount)} ms a replica, ` +
        `full read + merge ${Math.round(readMs)} ms`,
    );
  }
  await sql`VACUUM FULL mcpproxy.tool_stats`;
  const { bytes } = await size();
  say(`after VACUUM FULL (what autovacuum's reuse of dead rows converges to): ${mb(bytes)} (${bytes} bytes)`);
} finally {
  for (const s of stats) await s.close();
  for (const store of stores) await store.close();
  await pg.cleanup();
}
