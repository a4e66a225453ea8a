#!/usr/bin/env bun
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
/**
 * What the proxy adds to a tool call: the same echo call, straight to the fixture server and
 * through `mcpproxy serve` in several set-ups (no plugin; call statistics off; the built-in
 * truncation on; call limits on every server; traces on, sent to a live OTLP receiver in this
 * process; the four example plugins of plugins/ loaded), all over stdio, interleaved in one run. Reports p50/p95 of
 * each and its p50 ratio to the direct call; ratios from one run stay comparable on a noisy
 * machine where absolute times do not.
 *
 * The upstream is the fixture server (Bun; answers an echo in about 0.2 ms) or, with
 * `--server everything`, the published server-everything (Node; about 0.6 ms).
 *
 *   bun bench/call-overhead.ts [--calls N] [--server fixture|everything]
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { startOtlpReceiver } from "../tests/fixtures/otlp-receiver.ts";
import { EVERYTHING, FIXTURE } from "../tests/helpers.ts";
import { percentile } from "./metrics.ts";
import { benchEnv, ROOT, startProxyStdio } from "./proxy-process.ts";

/** The upstream server as an argv. Both have an `echo` tool. */
const UPSTREAMS = {
  fixture: [process.execPath, FIXTURE],
  everything: ["node", EVERYTHING, "stdio"],
} as const;
export type UpstreamName = keyof typeof UPSTREAMS;

export interface Timing {
  label: string;
  p50: number;
  p95: number;
  /** p50 over the direct call's p50. */
  ratioP50: number;
}

export interface OverheadReport {
  calls: number;
  upstream: UpstreamName;
  timings: Timing[];
  /** Spans the OTLP receiver decoded from the traced set-up by the end of the run. */
  spansReceived: number;
}

interface Setup {
  label: string;
  mcpproxy?: Record<string, unknown>;
  env?: Record<string, string>;
}

export async function measureCallOverhead(
  calls = 1000,
  upstream: UpstreamName = "fixture",
): Promise<OverheadReport> {
  const [command, ...args] = UPSTREAMS[upstream];
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-overhead-"));
  const plugins = readdirSync(join(ROOT, "plugins"))
    .filter((file) => file.endsWith(".ts"))
    .map((file) => join(ROOT, "plugins", file));
  // A live collector: every span of the traced set-up is exported to it and decoded, as a real one would.
  const collector = startOtlpReceiver();
  const setups: Setup[] = [
    { label: "through mcpproxy, no plugin" },
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
      env: { MCPPROXY_TRACES: "1", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector.url },
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
  const direct = new Client({ name: "bench", version: "1" });
  await direct.connect(new StdioClientTransport({ command, args }));
  const relay = new Client({ name: "bench", version: "1" });
  await relay.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join(ROOT, "bench", "byte-relay.ts"), command, ...args],
    }),
  );
  const proxies = await Promise.all(
    setups.map(async (setup, i) => {
      const dir = join(work, String(i));
      mkdirSync(dir);
      const configPath = join(dir, "mcp_config.json");
      writeFileSync(
        configPath,
        JSON.stringify({
          mcpServers: { fx: { command, args } },
          ...(setup.mcpproxy ? { mcpproxy: setup.mcpproxy } : {}),
        }),
      );
      return startProxyStdio(configPath, join(dir, "data"), benchEnv(join(dir, "home"), setup.env));
    }),
  );
  const callers = [
    () => direct.callTool({ name: "echo", arguments: { message: "ping" } }),
    () => relay.callTool({ name: "echo", arguments: { message: "ping" } }),
    ...proxies.map(
      (proxy) => () =>
        proxy.client.callTool({
          name: "call_tool",
          arguments: { name: "fx__echo", arguments: { message: "ping" } },
        }),
    ),
  ];
  try {
    for (const [i, call] of callers.entries()) {
      const first = await call();
      if (first.isError) throw new Error(`echo failed in set-up ${i}: ${JSON.stringify(first.content)}`);
    }
    for (let i = 0; i < 50; i++) for (const call of callers) await call();
    const times = callers.map((): number[] => []);
    for (let i = 0; i < calls; i++) {
      for (const [at, call] of callers.entries()) {
        const started = performance.now();
        await call();
        times[at]!.push(performance.now() - started);
      }
    }
    // What the traced proxy holds is sent within the batch interval (5 s by default).
    const expected = 2 * (calls + 51);
    for (let waited = 0; collector.spans.length < expected && waited < 10_000; waited += 100)
      await Bun.sleep(100);
    if (collector.rejected.length > 0)
      throw new Error(`the receiver refused spans: ${collector.rejected[0]}`);
    const directP50 = percentile(times[0]!, 50);
    const labels = [
      "direct to the server",
      "through a plain byte relay",
      ...setups.map((setup) => setup.label),
    ];
    return {
      calls,
      upstream,
      spansReceived: collector.spans.length,
      timings: labels.map((label, at) => ({
        label,
        p50: percentile(times[at]!, 50),
        p95: percentile(times[at]!, 95),
        ratioP50: percentile(times[at]!, 50) / directP50,
      })),
    };
  } finally {
    await direct.close();
    await relay.close();
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await collector.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

export function formatOverheadReport(report: OverheadReport): string {
  const f = (n: number) => n.toFixed(3);
  return [
    `call_tool overhead (${report.calls} echo calls each to ${report.upstream === "fixture" ? "the fixture server" : "server-everything"}, interleaved, stdio):`,
    ...report.timings.map(
      (t) => `  ${t.label}: p50 ${f(t.p50)} ms / p95 ${f(t.p95)} ms; p50 ratio ${t.ratioP50.toFixed(2)}x`,
    ),
    `  (the OTLP receiver decoded ${report.spansReceived} spans of the traced set-up: two a call)`,
  ].join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { calls: { type: "string" }, server: { type: "string" } } });
  const upstream = (values.server ?? "fixture") as UpstreamName;
  if (!(upstream in UPSTREAMS)) throw new Error("--server is fixture or everything");
  process.stdout.write(
    `${formatOverheadReport(await measureCallOverhead(Number(values.calls ?? 1000), upstream))}\n`,
  );
}
