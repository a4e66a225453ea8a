#!/usr/bin/env bun
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
/**
 * What the proxy adds to a tool call: the same echo call, interleaved, straight to the fixture
 * server and through `mcpproxy serve`, both over stdio, in one run. Reports p50/p95 of each and the
 * p50 ratio; ratios from one run stay comparable on a noisy machine where absolute times do not.
 *
 *   bun bench/call-overhead.ts [--calls N]
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { percentile } from "./metrics.ts";
import { benchEnv, ROOT, startProxyStdio } from "./proxy-process.ts";

const FIXTURE = join(ROOT, "tests", "fixtures", "fixture-server.ts");

export interface OverheadReport {
  calls: number;
  directMs: { p50: number; p95: number };
  proxiedMs: { p50: number; p95: number };
  ratioP50: number;
}

export async function measureCallOverhead(calls = 1000): Promise<OverheadReport> {
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-overhead-"));
  const configPath = join(work, "mcp_config.json");
  writeFileSync(
    configPath,
    JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [FIXTURE] } } }),
  );
  const direct = new Client({ name: "bench", version: "1" });
  await direct.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE] }));
  const proxy = await startProxyStdio(configPath, join(work, "data"), benchEnv(join(work, "home")));
  const viaDirect = () => direct.callTool({ name: "echo", arguments: { message: "ping" } });
  const viaProxy = () =>
    proxy.client.callTool({
      name: "call_tool",
      arguments: { name: "fx__echo", arguments: { message: "ping" } },
    });
  try {
    const first = await viaProxy();
    if (first.isError) throw new Error(`proxied echo failed: ${JSON.stringify(first.content)}`);
    for (let i = 0; i < 50; i++) {
      await viaDirect();
      await viaProxy();
    }
    const directTimes: number[] = [];
    const proxiedTimes: number[] = [];
    for (let i = 0; i < calls; i++) {
      let started = performance.now();
      await viaDirect();
      directTimes.push(performance.now() - started);
      started = performance.now();
      await viaProxy();
      proxiedTimes.push(performance.now() - started);
    }
    const directMs = { p50: percentile(directTimes, 50), p95: percentile(directTimes, 95) };
    const proxiedMs = { p50: percentile(proxiedTimes, 50), p95: percentile(proxiedTimes, 95) };
    return { calls, directMs, proxiedMs, ratioP50: proxiedMs.p50 / directMs.p50 };
  } finally {
    await direct.close();
    await proxy.close();
    rmSync(work, { recursive: true, force: true });
  }
}

export function formatOverheadReport(report: OverheadReport): string {
  const f = (n: number) => n.toFixed(3);
  return (
    `call_tool overhead (${report.calls} echo calls each, interleaved, stdio): ` +
    `direct p50 ${f(report.directMs.p50)} ms / p95 ${f(report.directMs.p95)} ms; ` +
    `through mcpproxy p50 ${f(report.proxiedMs.p50)} ms / p95 ${f(report.proxiedMs.p95)} ms; ` +
    `p50 ratio ${report.ratioP50.toFixed(2)}x`
  );
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { calls: { type: "string" } } });
  process.stdout.write(`${formatOverheadReport(await measureCallOverhead(Number(values.calls ?? 1000)))}\n`);
}
