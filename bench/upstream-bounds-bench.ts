#!/usr/bin/env bun
/**
 * What a hostile or careless upstream server can make `mcpproxy serve` hold and spend, as the
 * proxy's peak RSS (VmHWM) and CPU seconds, each on a fresh proxy with the default limits:
 *  - a remote (streamable HTTP) server answering one call with a 100 MB result;
 *  - a remote server listing 50 MB of tools in one tools/list answer;
 *  - a remote server paging 100 MB of tools, 10 MB a page;
 *  - a list_changed storm: 2,000 notifications at once from a 5,000-tool stdio server, with the
 *    latency of calls to another server measured meanwhile (and before, as the reference).
 * Run it against a build (`npm run build`, then `bun bench/upstream-bounds-bench.ts`), or against
 * another binary by copying it to dist/mcpproxy first. Bounded in count and time; figures, not
 * pass/fail. Linux only (it reads /proc).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  connectHttp,
  createSandbox,
  FIXTURE,
  fixtureEntry,
  startHttpProxy,
  watchOutput,
} from "../tests/helpers.ts";
import { cpuSeconds, peakRssMiB } from "./proxy-process.ts";

const MB = 1_000_000;

export interface BoundsCase {
  rssMiB: number;
  cpuSeconds: number;
  outcome: string;
}

export interface BoundsReport {
  idle: BoundsCase;
  bigResult: BoundsCase;
  bigList: BoundsCase;
  pagedList: BoundsCase;
  storm: BoundsCase & { relists: number; quietMs: LatencySummary; stormMs: LatencySummary };
}

interface LatencySummary {
  p50: number;
  p95: number;
  calls: number;
}

async function startRemote(args: string[]) {
  const child = Bun.spawn([process.execPath, FIXTURE, "--http", "0", "--storm-tools", ...args], {
    stdout: "pipe",
    stderr: "ignore",
  });
  const port = await watchOutput(child.stdout).waitFor(/\{"port":(\d+)\}/, 30_000);
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => child.kill() };
}

/** A fresh proxy on `servers`; `run` gets a client once the first indexing is done. */
async function withProxy<T>(
  servers: Record<string, unknown>,
  run: (client: Client, pid: number) => Promise<T>,
): Promise<T & { rssMiB: number; cpuSeconds: number }> {
  const sandbox = createSandbox();
  sandbox.writeConfig({ mcpServers: servers });
  // Whole results: the bench measures what the proxy holds to relay them, not the kept-results store.
  const proxy = await startHttpProxy(sandbox, [], {
    MCPPROXY_LOG_LEVEL: "info",
    MCPPROXY_RESULT_SPILL_BYTES: "0",
  });
  try {
    // A proxy that is still indexing after two minutes is measured as it is.
    await proxy.stderr
      .waitFor(/(servers indexed|indexing failed|no upstream server)/, 120_000)
      .catch(() => "");
    const client = await connectHttp(proxy.url);
    const result = await run(client, proxy.child.pid);
    await client.close();
    return { ...result, rssMiB: peakRssMiB(proxy.child.pid), cpuSeconds: cpuSeconds(proxy.child.pid) };
  } finally {
    await proxy.stop();
    sandbox.cleanup();
  }
}

const textOf = (result: unknown) =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((block) => block.text ?? "").join("");
const call = (client: Client, name: string, args: object) =>
  client.callTool({ name: "call_tool", arguments: { name, arguments: args } }, undefined, {
    timeout: 300_000,
  });

async function serverLine(client: Client, name: string): Promise<string> {
  const result = await client.callTool({ name: "upstream_servers", arguments: { operation: "list" } });
  const row = (
    JSON.parse(textOf(result)) as {
      servers: { name: string; state: string; tools: number; error?: string }[];
    }
  ).servers.find((server) => server.name === name);
  return row ? `${row.state}, ${row.tools} tools${row.error ? `: ${row.error.slice(0, 90)}` : ""}` : "absent";
}

function summarize(latencies: number[]): LatencySummary {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { p50: at(0.5), p95: at(0.95), calls: sorted.length };
}

/** Calls `other__echo` back to back for `ms`, returning each call's latency. */
async function echoLatencies(client: Client, ms: number): Promise<number[]> {
  const latencies: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const started = performance.now();
    await call(client, "other__echo", { message: "ping" });
    latencies.push(performance.now() - started);
    await Bun.sleep(20);
  }
  return latencies;
}

export async function runUpstreamBoundsBench(): Promise<BoundsReport> {
  const idle = await withProxy({ fx: fixtureEntry() }, async () => ({ outcome: "a stdio fixture, idle" }));

  const remote = await startRemote([]);
  const bigResult = await withProxy({ remote: { url: remote.url } }, async (client) => {
    const result = await call(client, "remote__big_result", { bytes: 100 * MB });
    const text = textOf(result);
    return {
      outcome: result.isError ? `error: ${text.slice(0, 110)}` : `passed through (${text.length} bytes)`,
    };
  });
  remote.stop();

  const listRemote = await startRemote(["--many-tools", "5000", "--description-bytes", "10000"]);
  const bigList = await withProxy(
    { remote: { url: listRemote.url }, other: fixtureEntry() },
    async (client) => ({
      outcome: await serverLine(client, "remote"),
    }),
  );
  listRemote.stop();

  const pagedRemote = await startRemote([
    "--many-tools",
    "10000",
    "--description-bytes",
    "10000",
    "--page-size",
    "1000",
  ]);
  const pagedList = await withProxy(
    { remote: { url: pagedRemote.url }, other: fixtureEntry() },
    async (client) => ({
      outcome: await serverLine(client, "remote"),
    }),
  );
  pagedRemote.stop();

  const storm = await withProxy(
    {
      stormy: { ...fixtureEntry({ args: ["--storm-tools", "--many-tools", "5000"] }), trust: "auto" },
      other: fixtureEntry({ args: ["--name", "other"] }),
    },
    async (client, pid) => {
      const quiet = await echoLatencies(client, 5_000);
      const before = cpuSeconds(pid);
      const started = performance.now();
      await call(client, "stormy__storm_list_changed", { count: 2_000 });
      // Until the proxy is quiet again (the last re-index done), at most 90 s.
      const during: number[] = [];
      let idleFor = 0;
      let last = cpuSeconds(pid);
      while (performance.now() - started < 90_000 && idleFor < 3) {
        during.push(...(await echoLatencies(client, 1_000)));
        const now = cpuSeconds(pid);
        idleFor = now - last < 0.15 ? idleFor + 1 : 0;
        last = now;
      }
      const relists = Number(textOf(await call(client, "stormy__tools_list_requests", {}))) - 1;
      return {
        outcome: `${relists} re-lists, quiet again after ${((performance.now() - started) / 1000).toFixed(0)} s`,
        relists,
        stormCpu: cpuSeconds(pid) - before,
        quietMs: summarize(quiet),
        stormMs: summarize(during),
      };
    },
  );
  return {
    idle,
    bigResult,
    bigList,
    pagedList,
    storm: { ...storm, cpuSeconds: storm.stormCpu },
  };
}

export function formatUpstreamBoundsReport(report: BoundsReport): string {
  const f = (n: number) => n.toFixed(0);
  const line = (label: string, item: BoundsCase) =>
    `  ${label}: peak ${f(item.rssMiB)} MiB, ${item.cpuSeconds.toFixed(1)} CPU-s; ${item.outcome}`;
  const { storm } = report;
  return [
    "Upstream bounds, serve peak RSS and CPU seconds (each on a fresh proxy):",
    line("idle", report.idle),
    line("a 100 MB tool result over HTTP", report.bigResult),
    line("a 50 MB tools/list over HTTP", report.bigList),
    line("100 MB of tools in 10 pages over HTTP", report.pagedList),
    `  2,000 list_changed from a 5,000-tool server: peak ${f(storm.rssMiB)} MiB, ${storm.cpuSeconds.toFixed(1)} CPU-s in the storm; ${storm.outcome}`,
    `    calls to another server: p50 ${storm.quietMs.p50.toFixed(1)} / p95 ${storm.quietMs.p95.toFixed(1)} ms before, p50 ${storm.stormMs.p50.toFixed(1)} / p95 ${storm.stormMs.p95.toFixed(1)} ms during (${storm.stormMs.calls} calls)`,
  ].join("\n");
}

if (import.meta.main) process.stdout.write(`${formatUpstreamBoundsReport(await runUpstreamBoundsBench())}\n`);
