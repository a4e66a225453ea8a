#!/usr/bin/env bun
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
/**
 * What the proxy adds to a tool call, in one interleaved run: the same echo call straight to a
 * server, through a plain byte relay (byte-relay.ts, the floor for any proxy that is a separate
 * process) and through `mcpproxy serve` in each routing, for a 2025 client (SDK v1, to the 2025
 * fixture-server.ts) and a 2026-07-28 client (SDK v2 pinned, to modern-server.ts --modern-only),
 * over stdio and streamable HTTP. Each path gets p50/p95 and its p50 ratio to the direct call and to
 * the byte relay, from the interleaved calls, and the CPU the middle process (relay or proxy) spent
 * per call: its threads' on-CPU time from /proc before and after a burst of calls on that path
 * alone, over their number (alone, so that its idle timers do not count the other paths' time), in
 * ten rounds of bursts on every path in turn, the median round taken.
 * Ratios and CPU from one run stay comparable on a noisy machine where absolute times do not.
 *
 * Routings: call_tool; by name (a 2025 client: `--routing dynamic`, the tool registered by a
 * retrieve_tools first; a 2026 client has no session for dynamic routing: `--routing all`);
 * `--passthrough` (the server's own tool names). Over HTTP: call_tool and passthrough.
 *
 *   bun bench/call-overhead.ts [--calls N] [--warmup N] [--spacing-ms MS] [--only stdio|http] [--setups]
 *                              [--binary PATH] [--baseline PATH] [--server fixture|everything]
 *
 * `--setups` adds the 2025 stdio call_tool with statistics off, truncation, call limits, traces
 * to a live OTLP receiver in this process, and the example plugins. `--baseline` measures a second
 * build's proxies beside the first, interleaved (before/after in one run): its binary, or a built
 * checkout (its dist/mcpproxy).
 */
import { startOtlpReceiver } from "../tests/fixtures/otlp-receiver.ts";
import { EVERYTHING, FIXTURE, MODERN_FIXTURE } from "../tests/helpers.ts";
import { percentile } from "./metrics.ts";
import {
  type Connected,
  connectHttp,
  connectStdio,
  type Era,
  type Started,
  startHttpServe,
  startPortPrinter,
} from "./overhead-clients.ts";
import { BINARY, benchEnv, ROOT, threadCpuSeconds } from "./proxy-process.ts";

const ERAS: Era[] = ["2025", "2026"];
/** Rounds of the CPU measure (each a burst of calls/rounds on every path in turn). */
const CPU_ROUNDS = 10;
const ECHO = { message: "ping" };

/** The upstream server of each era, over stdio and HTTP (argv). */
const UPSTREAM: Record<Era, { stdio: string[]; http: string[] }> = {
  "2025": {
    stdio: [process.execPath, FIXTURE],
    http: [process.execPath, FIXTURE, "--http", "0", "--name", "fx"],
  },
  "2026": {
    stdio: [process.execPath, MODERN_FIXTURE, "--modern-only"],
    http: [process.execPath, MODERN_FIXTURE, "--http", "0", "--modern-only"],
  },
};
/** `--server everything`: the published server-everything (Node) as the 2025 stdio upstream. */
const EVERYTHING_STDIO = ["node", EVERYTHING, "stdio"];
const RELAY = join(ROOT, "bench", "byte-relay.ts");

export interface PathTiming {
  /** "stdio, 2025 client" and the like: the rows of one group share a direct call and a relay. */
  group: string;
  label: string;
  p50: number;
  p95: number;
  ratioToDirect: number;
  /** NaN for the direct call and the relay. */
  ratioToRelay: number;
  /** CPU µs per call of the process between client and server, all its threads (NaN for the direct call). */
  cpuMicros: number;
  /** Of it, the main thread's (the JavaScript; the rest is the JIT's compilers and the collector's helpers). */
  cpuMainMicros: number;
}

export interface OverheadReport {
  calls: number;
  warmup: number;
  spacingMs: number;
  timings: PathTiming[];
  /** Spans the OTLP receiver decoded from the traced set-up (with --setups), by the end of the run. */
  spansReceived?: number;
}

export interface OverheadOptions {
  calls?: number;
  /**
   * Calls on each path before any is measured (default: a fifth of `calls`, 20 to 200). A proxy's
   * JIT compiles its hot functions over the first thousands of calls, on threads of its own whose
   * time the CPU figure counts: `--warmup 20000` measures a proxy that has served a day's calls.
   */
  warmup?: number;
  /**
   * A pause before each timed call, in ms (default none): an agent's calls come seconds apart, and
   * a call after a pause finds the processes' caches cold, which back-to-back calls never do.
   */
  spacingMs?: number;
  only?: "stdio" | "http" | undefined;
  setups?: boolean;
  binary?: string;
  baseline?: string | undefined;
  /** The 2025 stdio upstream: the fixture server (Bun), or server-everything (Node). */
  server?: "fixture" | "everything";
}

interface Path {
  group: string;
  label: string;
  kind: "direct" | "relay" | "proxy";
  call: () => Promise<unknown>;
  pid?: number;
}

interface Setup {
  label: string;
  mcpproxy?: Record<string, unknown>;
  env?: Record<string, string>;
}

export async function measureCallOverhead(options: OverheadOptions = {}): Promise<OverheadReport> {
  const calls = options.calls ?? 1000;
  const binaries = [
    { name: "mcpproxy", path: options.binary ?? BINARY },
    ...(options.baseline ? [{ name: "baseline", path: binaryAt(options.baseline) }] : []),
  ];
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-overhead-"));
  const closers: (() => Promise<unknown>)[] = [];
  const paths: Path[] = [];
  const collector = options.setups ? startOtlpReceiver() : undefined;
  let dirs = 0;
  /** A data dir and config of its own for each proxy. */
  const sandbox = (servers: Record<string, unknown>, mcpproxy?: Record<string, unknown>) => {
    const dir = join(work, String(dirs++));
    mkdirSync(dir);
    const config = join(dir, "mcp_config.json");
    writeFileSync(config, JSON.stringify({ mcpServers: servers, ...(mcpproxy ? { mcpproxy } : {}) }));
    return { config, data: join(dir, "data"), home: join(dir, "home") };
  };
  const keep = (connected: Connected) => {
    closers.push(() => connected.close());
    return connected;
  };
  const echoBy = (client: Connected, name: string) => () => client.callTool({ name, arguments: ECHO });
  const callTool = (client: Connected, name: string) => () =>
    client.callTool({ name: "call_tool", arguments: { name, arguments: ECHO } });

  try {
    if (options.only !== "http") {
      for (const era of ERAS) {
        const group = `stdio, ${era} client`;
        const server =
          era === "2025" && options.server === "everything" ? EVERYTHING_STDIO : UPSTREAM[era].stdio;
        const direct = await connectStdio(era, server);
        paths.push({
          group,
          label: "direct to the server",
          kind: "direct",
          call: echoBy(keep(direct.client), "echo"),
        });
        const relay = await connectStdio(era, [process.execPath, RELAY, ...server]);
        paths.push({
          group,
          label: "byte relay",
          kind: "relay",
          call: echoBy(keep(relay.client), "echo"),
          pid: relay.pid,
        });
        const fx = { fx: { command: server[0], args: server.slice(1) } };
        const byName = era === "2025" ? "dynamic" : "all";
        for (const binary of binaries) {
          const serve = async (
            args: string[],
            env?: Record<string, string>,
            mcpproxy?: Record<string, unknown>,
          ) => {
            const box = sandbox(fx, mcpproxy);
            const argv = [binary.path, "serve", "--config", box.config, "--data-dir", box.data, ...args];
            const proxy = await connectStdio(era, argv, benchEnv(box.home, env));
            keep(proxy.client);
            return proxy;
          };
          const plain = await serve([]);
          paths.push({
            group,
            label: `${binary.name}, call_tool`,
            kind: "proxy",
            call: callTool(plain.client, "fx__echo"),
            pid: plain.pid,
          });
          const named = await serve(["--routing", byName]);
          if (byName === "dynamic") {
            await named.client.callTool({
              name: "retrieve_tools",
              arguments: { query: "echo a message back" },
            });
          }
          paths.push({
            group,
            label: `${binary.name}, ${byName} routing: fx__echo by name`,
            kind: "proxy",
            call: echoBy(named.client, "fx__echo"),
            pid: named.pid,
          });
          const passthrough = await serve(["--passthrough", "fx"]);
          paths.push({
            group,
            label: `${binary.name}, --passthrough: echo`,
            kind: "proxy",
            call: echoBy(passthrough.client, "echo"),
            pid: passthrough.pid,
          });
          if (options.setups && era === "2025") {
            for (const setup of setupsOf(collector!.url)) {
              const proxy = await serve([], setup.env, setup.mcpproxy);
              paths.push({
                group,
                label: `${binary.name}, call_tool ${setup.label}`,
                kind: "proxy",
                call: callTool(proxy.client, "fx__echo"),
                pid: proxy.pid,
              });
            }
          }
        }
      }
    }
    if (options.only !== "stdio") {
      for (const era of ERAS) {
        const group = `streamable HTTP, ${era} client`;
        const started = (s: Started) => {
          closers.push(s.stop);
          return s;
        };
        const server = started(await startPortPrinter(UPSTREAM[era].http));
        const direct = keep(await connectHttp(era, server.url));
        paths.push({ group, label: "direct to the server", kind: "direct", call: echoBy(direct, "echo") });
        const relay = started(await startPortPrinter([process.execPath, RELAY, "--http", server.url.href]));
        paths.push({
          group,
          label: "byte relay",
          kind: "relay",
          call: echoBy(keep(await connectHttp(era, relay.url)), "echo"),
          pid: relay.pid,
        });
        for (const binary of binaries) {
          for (const passthrough of [false, true]) {
            const box = sandbox({ fx: { url: server.url.href } });
            const args = [
              "--config",
              box.config,
              "--data-dir",
              box.data,
              ...(passthrough ? ["--passthrough", "fx"] : []),
            ];
            const proxy = started(await startHttpServe(binary.path, args, benchEnv(box.home)));
            const client = keep(await connectHttp(era, new URL("/mcp", proxy.url)));
            paths.push(
              passthrough
                ? {
                    group,
                    label: `${binary.name}, --passthrough: echo`,
                    kind: "proxy",
                    call: echoBy(client, "echo"),
                    pid: proxy.pid,
                  }
                : {
                    group,
                    label: `${binary.name}, call_tool`,
                    kind: "proxy",
                    call: callTool(client, "fx__echo"),
                    pid: proxy.pid,
                  },
            );
          }
        }
      }
    }
    for (const path of paths) {
      const first = (await path.call()) as { isError?: boolean; content?: unknown };
      if (first.isError) throw new Error(`${path.group}, ${path.label}: ${JSON.stringify(first.content)}`);
    }
    const warmUp = options.warmup ?? Math.min(200, Math.max(20, Math.round(calls / 5)));
    for (let i = 0; i < warmUp; i++) for (const path of paths) await path.call();
    const times = paths.map((): number[] => []);
    for (let i = 0; i < calls; i++) {
      for (const [at, path] of paths.entries()) {
        if (options.spacingMs) await Bun.sleep(options.spacingMs);
        const begun = performance.now();
        await path.call();
        times[at]!.push(performance.now() - begun);
      }
    }
    // CPU in rounds: each round a burst on each path alone, the order turned every round; a path's
    // figure is its median round, so a spell of load from outside the run skews one round, not a path.
    const rounds = Math.min(CPU_ROUNDS, calls);
    const burst = Math.ceil(calls / rounds);
    const perRound = paths.map((): number[] => []);
    const mainPerRound = paths.map((): number[] => []);
    for (let round = 0; round < rounds; round++) {
      const order = [...paths.keys()];
      if (round % 2 === 1) order.reverse();
      for (const at of order) {
        const path = paths[at]!;
        if (!path.pid) continue;
        const before = threadCpuSeconds(path.pid);
        for (let i = 0; i < burst; i++) await path.call();
        const after = threadCpuSeconds(path.pid);
        const main = after.main - before.main;
        perRound[at]!.push(((main + after.others - before.others) / burst) * 1e6);
        mainPerRound[at]!.push((main / burst) * 1e6);
      }
    }
    const median = (list: number[]) => (list.length > 0 ? percentile(list, 50) : Number.NaN);
    const cpu = perRound.map(median);
    const cpuMain = mainPerRound.map(median);
    let spansReceived: number | undefined;
    if (collector) {
      // The traced proxy's spans are sent within the batch interval (5 s by default).
      const expected = 2 * (2 * calls + warmUp + 1) * binaries.length;
      for (let waited = 0; collector.spans.length < expected && waited < 10_000; waited += 100)
        await Bun.sleep(100);
      if (collector.rejected.length > 0)
        throw new Error(`the receiver refused spans: ${collector.rejected[0]}`);
      spansReceived = collector.spans.length;
    }
    const p50 = times.map((list) => percentile(list, 50));
    const baseOf = (group: string, kind: Path["kind"]) =>
      p50[paths.findIndex((path) => path.group === group && path.kind === kind)]!;
    return {
      calls,
      warmup: warmUp,
      spacingMs: options.spacingMs ?? 0,
      ...(spansReceived !== undefined ? { spansReceived } : {}),
      timings: paths.map((path, at) => ({
        group: path.group,
        label: path.label,
        p50: p50[at]!,
        p95: percentile(times[at]!, 95),
        ratioToDirect: p50[at]! / baseOf(path.group, "direct"),
        ratioToRelay: path.kind === "proxy" ? p50[at]! / baseOf(path.group, "relay") : Number.NaN,
        cpuMicros: cpu[at]!,
        cpuMainMicros: cpuMain[at]!,
      })),
    };
  } finally {
    await Promise.allSettled(closers.reverse().map((close) => close()));
    await collector?.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** A build's binary: PATH itself, or PATH/dist/mcpproxy when PATH is a checkout (a worktree built). */
function binaryAt(path: string): string {
  return statSync(path).isDirectory() ? join(path, "dist", "mcpproxy") : path;
}

/** The set-ups of --setups, beside the plain proxy (2025 stdio call_tool). */
function setupsOf(collectorUrl: string): Setup[] {
  const plugins = readdirSync(join(ROOT, "plugins"))
    .filter((file) => file.endsWith(".ts"))
    .map((file) => join(ROOT, "plugins", file));
  return [
    { label: "with call statistics off (MCPPROXY_STATS=0)", env: { MCPPROXY_STATS: "0" } },
    {
      label: "with truncation on (MCPPROXY_TRUNCATE_OUTPUT_LEN=1000)",
      env: { MCPPROXY_TRUNCATE_OUTPUT_LEN: "1000" },
    },
    {
      // Never over the limits (calls go one at a time): what the door itself costs a call.
      label: "with call limits (MCPPROXY_MAX_CONCURRENT=8, MCPPROXY_RATE_LIMIT=600000/min)",
      env: { MCPPROXY_MAX_CONCURRENT: "8", MCPPROXY_RATE_LIMIT: "600000/min burst 1000" },
    },
    {
      // The exporter's defaults (a batch of 512 or every 5 s): what a call pays is the span work.
      label: "with traces on (MCPPROXY_TRACES=1, a live OTLP receiver)",
      env: { MCPPROXY_TRACES: "1", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collectorUrl },
    },
    {
      label: `with the ${plugins.length} example plugins`,
      mcpproxy: {
        plugins: plugins.map((path) =>
          path.endsWith("boost-server.ts") ? { path, options: { server: "fx" } } : path,
        ),
      },
    },
  ];
}

export function formatOverheadReport(report: OverheadReport): string {
  const ms = (n: number) => n.toFixed(3).padStart(7);
  const ratio = (n: number) => (Number.isNaN(n) ? "      -" : `${n.toFixed(2)}x`.padStart(7));
  const micros = (n: number) => (Number.isNaN(n) ? "     -" : n.toFixed(0).padStart(6));
  const width = Math.max(...report.timings.map((t) => t.label.length));
  const lines = [
    `call overhead: ${report.calls} echo calls on each path, interleaved in one run${report.spacingMs ? `, each after a pause of ${report.spacingMs} ms` : ""}, after ${report.warmup} on each; CPU: on-CPU time of the process between client and server per call, all its threads and its main thread alone, in bursts on each path alone (the median of ${CPU_ROUNDS} rounds)`,
  ];
  let group: string | undefined;
  for (const t of report.timings) {
    if (t.group !== group) {
      group = t.group;
      lines.push(
        `${group}:`,
        `  ${"path".padEnd(width)}   p50 ms  p95 ms  /direct  /relay  CPU µs/call  main thread`,
      );
    }
    lines.push(
      `  ${t.label.padEnd(width)}  ${ms(t.p50)} ${ms(t.p95)}  ${ratio(t.ratioToDirect)} ${ratio(t.ratioToRelay)}  ${micros(t.cpuMicros)}       ${micros(t.cpuMainMicros)}`,
    );
  }
  if (report.spansReceived !== undefined)
    lines.push(`(the OTLP receiver decoded ${report.spansReceived} spans of the traced set-ups: two a call)`);
  return lines.join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      calls: { type: "string" },
      warmup: { type: "string" },
      "spacing-ms": { type: "string" },
      only: { type: "string" },
      setups: { type: "boolean" },
      binary: { type: "string" },
      baseline: { type: "string" },
      server: { type: "string" },
    },
  });
  if (values.only !== undefined && values.only !== "stdio" && values.only !== "http")
    throw new Error("--only is stdio or http");
  if (values.server !== undefined && values.server !== "fixture" && values.server !== "everything")
    throw new Error("--server is fixture or everything");
  const report = await measureCallOverhead({
    calls: Number(values.calls ?? 1000),
    ...(values.warmup !== undefined ? { warmup: Number(values.warmup) } : {}),
    ...(values["spacing-ms"] !== undefined ? { spacingMs: Number(values["spacing-ms"]) } : {}),
    only: values.only as "stdio" | "http" | undefined,
    setups: values.setups ?? false,
    ...(values.binary ? { binary: values.binary } : {}),
    baseline: values.baseline,
    server: (values.server ?? "fixture") as "fixture" | "everything",
  });
  process.stdout.write(`${formatOverheadReport(report)}\n`);
}
