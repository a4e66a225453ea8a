#!/usr/bin/env bun
/**
 * What /metrics costs when many distinct tools are called: one fixture server lists N tools
 * (`--tools-file`), each is called once over HTTP, then /metrics is scraped. Prints the series
 * count, the scrape's bytes and time, and the proxy's RSS before the calls, after them and at its
 * peak. Bounded in count (N, default 20,000) and time; figures, not pass/fail. Linux (reads /proc).
 *
 *   bun bench/metrics-cardinality-bench.ts [--tools N] [--binary PATH] [--tool-limit N]
 *
 * `--binary /work/baseline/mcpproxy` measures another build with the same fixture and calls.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createSandbox, fixtureEntry, watchOutput } from "../tests/helpers.ts";
import { BINARY, cpuSeconds, currentRssMiB, peakRssMiB } from "./proxy-process.ts";

const { values } = parseArgs({
  options: {
    tools: { type: "string", default: "20000" },
    binary: { type: "string", default: BINARY },
    "tool-limit": { type: "string" },
  },
});
const count = Number(values.tools);
const CONCURRENCY = 50;

const sandbox = createSandbox();
const toolsFile = join(sandbox.dir, "tools.json");
writeFileSync(
  toolsFile,
  JSON.stringify(
    Array.from({ length: count }, (_, i) => ({
      name: `tool_${i}`,
      description: `Tool number ${i} of the cardinality bench`,
      inputSchema: { type: "object" },
    })),
  ),
);
sandbox.writeConfig({
  // maxTools: more than the default 10,000 bound of one server's list (a release before it ignores the key).
  mcpServers: {
    many: { ...fixtureEntry({ args: ["--tools-file", toolsFile] }), timeoutMs: 120_000, maxTools: count },
  },
  mcpproxy: {
    metrics: true,
    ...(values["tool-limit"] ? { metricsToolLimit: Number(values["tool-limit"]) } : {}),
  },
});
const child = Bun.spawn(
  [
    values.binary,
    "serve",
    "--transport",
    "http",
    "--port",
    "0",
    "--config",
    sandbox.configPath,
    "--data-dir",
    sandbox.dataDir,
  ],
  { env: sandbox.env({ MCPPROXY_LOG_LEVEL: "info" }), stdout: "ignore", stderr: "pipe" },
);
try {
  const stderr = watchOutput(child.stderr);
  const url = new URL(await stderr.waitFor(/serving MCP at (http:\/\/\S+?);/, 30_000));
  await stderr.waitFor(/servers indexed/, 300_000);
  const client = new Client({ name: "metrics-bench", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(url));
  const before = currentRssMiB(child.pid);
  const cpuBefore = cpuSeconds(child.pid);
  const started = performance.now();
  let failed = 0;
  for (let start = 0; start < count; start += CONCURRENCY) {
    const results = await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, count - start) }, (_, i) =>
        client.callTool({ name: "call_tool", arguments: { name: `many__tool_${start + i}` } }),
      ),
    );
    failed += results.filter((result) => result.isError).length;
  }
  // Figures of calls that never reached a tool would measure nothing.
  if (failed > 0) throw new Error(`${failed} of ${count} calls failed`);
  const callsS = (performance.now() - started) / 1000;
  const cpuAfterCalls = cpuSeconds(child.pid);
  const scrapeStarted = performance.now();
  const text = await (await fetch(new URL("/metrics", url))).text();
  const scrapeMs = performance.now() - scrapeStarted;
  const scrapeCpu = cpuSeconds(child.pid) - cpuAfterCalls;
  const series = text.split("\n").filter((line) => line && !line.startsWith("#")).length;
  const after = currentRssMiB(child.pid);
  await client.close();
  const figures = {
    binary: values.binary,
    tools: count,
    calls: count,
    callsSeconds: Math.round(callsS * 10) / 10,
    callsCpuSeconds: Math.round((cpuAfterCalls - cpuBefore) * 10) / 10,
    scrapeCpuSeconds: Math.round(scrapeCpu * 100) / 100,
    series,
    scrapeBytes: Buffer.byteLength(text),
    scrapeMs: Math.round(scrapeMs),
    rssBeforeCallsMiB: Math.round(before),
    rssAfterScrapeMiB: Math.round(after),
    rssGrowthMiB: Math.round(after - before),
    peakRssMiB: Math.round(peakRssMiB(child.pid)),
  };
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
} finally {
  child.kill("SIGTERM");
  await child.exited;
  sandbox.cleanup();
}
