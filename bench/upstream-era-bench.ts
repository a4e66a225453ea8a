#!/usr/bin/env bun
import { Database } from "bun:sqlite";
/**
 * What finding an upstream's protocol era costs (issue 22, item 4), with one upstream each:
 * a 2026-07-28-only server, a 2025 (SDK v1) server (the probe, then initialize), one that exits on
 * the probe (started again), over stdio, and the first two over HTTP. For each:
 *  - `index`: the wall time of `mcpproxy index` (the binary, its start included): the first run on
 *    a fresh data dir, a run with the stored verdict (no probe), and a run on the same catalog with
 *    the verdict deleted (it probes again: the era's cost apart from the first run's own);
 *  - `connect`: connectUpstream in process (start, era, initialize or not, tools/list), to the ms,
 *    without a verdict and with the one the first stored.
 * Medians of N rounds; figures, not pass/fail.
 *
 *   npm run build && bun bench/upstream-era-bench.ts [--rounds 7]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { ServerConfig } from "../src/config/parse-server.ts";
import { createMemoryEraStore } from "../src/store/sqlite/era-store.ts";
import { connectUpstream } from "../src/upstream/upstream-connection.ts";
import { FIXTURE, MODERN_FIXTURE, watchOutput } from "../tests/helpers.ts";
import { percentile } from "./metrics.ts";
import { benchEnv, runBinary } from "./proxy-process.ts";

interface Case {
  name: string;
  /** The config entry, and a way to stop what it needs (an HTTP server started for it). */
  start(): Promise<{ entry: Record<string, unknown>; stop(): void }>;
}

const stdio = (file: string, args: string[]) => async () => ({
  entry: { command: process.execPath, args: [file, ...args] },
  stop() {},
});

const http = (file: string, args: string[]) => async () => {
  const child = Bun.spawn([process.execPath, file, "--http", "0", ...args], {
    stdout: "pipe",
    stderr: "ignore",
  });
  const port = await watchOutput(child.stdout).waitFor(/\{"port":(\d+)\}/, 10_000);
  return { entry: { url: `http://127.0.0.1:${port}/mcp` }, stop: () => child.kill() };
};

const CASES: Case[] = [
  { name: "modern-only, stdio", start: stdio(MODERN_FIXTURE, ["--modern-only"]) },
  { name: "legacy v1, stdio", start: stdio(FIXTURE, []) },
  { name: "exits on the probe, stdio", start: stdio(FIXTURE, ["--exit-on-probe"]) },
  { name: "modern-only, HTTP", start: http(MODERN_FIXTURE, ["--modern-only"]) },
  { name: "legacy v1, HTTP", start: http(FIXTURE, []) },
];

function configOf(name: string, entry: Record<string, unknown>): ServerConfig {
  const base = { name, enabled: true, timeoutMs: 30_000 };
  return "url" in entry
    ? { ...base, transport: "streamable-http", url: String(entry.url), headers: {} }
    : { ...base, transport: "stdio", command: String(entry.command), args: entry.args as string[], env: {} };
}

function forgetVerdicts(catalogPath: string): void {
  const db = new Database(catalogPath);
  db.run("DELETE FROM server_eras");
  db.close();
}

async function measureCase(benchCase: Case, rounds: number) {
  const times = {
    indexFirst: [] as number[],
    indexStored: [] as number[],
    indexProbed: [] as number[],
    connectFirst: [] as number[],
    connectStored: [] as number[],
  };
  const server = await benchCase.start();
  try {
    for (let round = 0; round < rounds; round++) {
      const work = mkdtempSync(join(tmpdir(), "mcpproxy-era-bench-"));
      try {
        const configPath = join(work, "config.json");
        writeFileSync(configPath, JSON.stringify({ mcpServers: { up: server.entry } }));
        const args = ["index", "--config", configPath, "--data-dir", join(work, "data")];
        const env = benchEnv(join(work, "home"));
        for (const into of [times.indexFirst, times.indexStored, times.indexProbed]) {
          if (into === times.indexProbed) forgetVerdicts(join(work, "data", "catalog.db"));
          const run = await runBinary(args, env);
          if (run.code !== 0) throw new Error(`${benchCase.name}: index failed\n${run.stdout}${run.stderr}`);
          into.push(run.ms);
        }
        const eras = createMemoryEraStore();
        const config = configOf("up", server.entry);
        for (const into of [times.connectFirst, times.connectStored]) {
          const started = performance.now();
          const connection = await connectUpstream(config, { eras });
          into.push(performance.now() - started);
          await connection.close();
        }
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    }
  } finally {
    server.stop();
  }
  const median = (values: number[]) => percentile(values, 50);
  return {
    name: benchCase.name,
    indexFirst: median(times.indexFirst),
    indexStored: median(times.indexStored),
    indexProbed: median(times.indexProbed),
    connectFirst: median(times.connectFirst),
    connectStored: median(times.connectStored),
  };
}

export async function measureUpstreamEras(rounds = 7) {
  const results = [];
  for (const benchCase of CASES) results.push(await measureCase(benchCase, rounds));
  return { rounds, results };
}

export function formatUpstreamEraReport(report: Awaited<ReturnType<typeof measureUpstreamEras>>): string {
  const ms = (value: number) => `${value.toFixed(0).padStart(5)} ms`;
  const lines = [
    `Finding an upstream's era: medians of ${report.rounds} rounds (probe: no verdict; stored: the verdict of an earlier run)`,
    `${"upstream".padEnd(28)}${"index first".padStart(13)}${"index probe".padStart(13)}${"index stored".padStart(14)}` +
      `${"connect probe".padStart(15)}${"connect stored".padStart(16)}`,
  ];
  for (const row of report.results) {
    lines.push(
      `${row.name.padEnd(28)}${ms(row.indexFirst).padStart(13)}${ms(row.indexProbed).padStart(13)}${ms(row.indexStored).padStart(14)}` +
        `${ms(row.connectFirst).padStart(15)}${ms(row.connectStored).padStart(16)}`,
    );
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { rounds: { type: "string" } } });
  process.stdout.write(`${formatUpstreamEraReport(await measureUpstreamEras(Number(values.rounds ?? 7)))}\n`);
}
