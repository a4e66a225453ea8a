#!/usr/bin/env bun
/**
 * Load through the proxy: 10 fixture servers behind one `mcpproxy serve` (stdio), rounds of 200
 * concurrent calls spread over them, each carrying a nonce that must come back in its own answer
 * (none lost, none crossed). The same rounds go straight to the 10 servers for the ratio, in one
 * run. Then six blocks of 10,000 more calls, with the proxy's RSS before and after each: growth
 * in the first block that stops is warm-up (JIT, allocator pools); growth in every block is a leak.
 *
 *   bun bench/load-bench.ts [--rounds N]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { FIXTURE } from "../tests/helpers.ts";
import { percentile } from "./metrics.ts";
import { benchEnv, currentRssMiB, startProxyStdio } from "./proxy-process.ts";

const SERVERS = 10;
const CONCURRENCY = 200;

export interface LoadReport {
  rounds: number;
  calls: number;
  lost: number;
  crossed: number;
  direct: { p50: number; p99: number };
  proxied: { p50: number; p99: number };
  rssBeforeMiB: number;
  /** RSS after each block of 10,000 calls. */
  rssAfterMiB: number[];
}

export async function runLoadBench(rounds = 20): Promise<LoadReport> {
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-load-"));
  const configPath = join(work, "mcp_config.json");
  const names = Array.from({ length: SERVERS }, (_, i) => `s${i}`);
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: Object.fromEntries(
        names.map((name) => [name, { command: process.execPath, args: [FIXTURE, "--name", name] }]),
      ),
    }),
  );
  const direct = await Promise.all(
    names.map(async (name) => {
      const client = new Client({ name: "load", version: "1" });
      await client.connect(
        new StdioClientTransport({ command: process.execPath, args: [FIXTURE, "--name", name] }),
      );
      return client;
    }),
  );
  const proxy = await startProxyStdio(configPath, join(work, "data"), benchEnv(join(work, "home")));
  let lost = 0;
  let crossed = 0;
  let calls = 0;
  const check = (text: string | undefined, server: string, nonce: string) => {
    calls++;
    if (text === undefined) lost++;
    else if (text !== `${server} echo: ${nonce}`) crossed++;
  };
  const viaProxy = async (i: number) => {
    const server = names[i % SERVERS]!;
    const nonce = crypto.randomUUID();
    const started = performance.now();
    const result = await proxy.client
      .callTool({ name: "call_tool", arguments: { name: `${server}__echo`, arguments: { message: nonce } } })
      .catch(() => undefined);
    check((result?.content as { text?: string }[] | undefined)?.[0]?.text, server, nonce);
    return performance.now() - started;
  };
  const viaDirect = async (i: number) => {
    const server = names[i % SERVERS]!;
    const nonce = crypto.randomUUID();
    const started = performance.now();
    const result = await direct[i % SERVERS]!.callTool({ name: "echo", arguments: { message: nonce } });
    check((result.content as { text?: string }[])[0]?.text, server, nonce);
    return performance.now() - started;
  };
  const round = (call: (i: number) => Promise<number>) =>
    Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => call(i)));
  try {
    await round(viaProxy);
    await round(viaDirect);
    const times = { direct: [] as number[], proxied: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      times.direct.push(...(await round(viaDirect)));
      times.proxied.push(...(await round(viaProxy)));
    }
    const rssBeforeMiB = currentRssMiB(proxy.pid);
    const rssAfterMiB: number[] = [];
    for (let block = 0; block < BLOCKS; block++) {
      for (let r = 0; r < 10_000 / CONCURRENCY; r++) await round(viaProxy);
      rssAfterMiB.push(currentRssMiB(proxy.pid));
    }
    return {
      rounds,
      calls,
      lost,
      crossed,
      direct: { p50: percentile(times.direct, 50), p99: percentile(times.direct, 99) },
      proxied: { p50: percentile(times.proxied, 50), p99: percentile(times.proxied, 99) },
      rssBeforeMiB,
      rssAfterMiB,
    };
  } finally {
    await proxy.close();
    await Promise.all(direct.map((client) => client.close()));
    rmSync(work, { recursive: true, force: true });
  }
}

/** Blocks of 10,000 calls after the timed rounds, RSS read after each. */
const BLOCKS = 6;

export function formatLoadReport(report: LoadReport): string {
  const f = (n: number) => n.toFixed(2);
  return [
    `load: ${report.rounds} rounds of ${CONCURRENCY} concurrent echo calls over ${SERVERS} servers, direct and through mcpproxy; ${report.calls} calls in all:`,
    `  nonces lost ${report.lost}, crossed ${report.crossed}`,
    `  direct p50 ${f(report.direct.p50)} ms / p99 ${f(report.direct.p99)} ms; proxied p50 ${f(report.proxied.p50)} ms / p99 ${f(report.proxied.p99)} ms; ratio p50 ${(report.proxied.p50 / report.direct.p50).toFixed(2)}x, p99 ${(report.proxied.p99 / report.direct.p99).toFixed(2)}x`,
    `  proxy RSS before ${(BLOCKS * 10_000).toLocaleString("en")} more calls ${f(report.rssBeforeMiB)} MiB; after each 10,000: ${report.rssAfterMiB.map(f).join(", ")} MiB`,
  ].join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { rounds: { type: "string" } } });
  process.stdout.write(`${formatLoadReport(await runLoadBench(Number(values.rounds ?? 20)))}\n`);
}
