#!/usr/bin/env bun
/**
 * What relaying a server's sampling request through the proxy costs. server-everything's
 * `trigger-sampling-request` (the server asks the client for a completion while serving the call)
 * and its `echo`, each called straight and through `mcpproxy serve` over stdio, by a client that
 * answers sampling at once; interleaved in one run. The relay's own cost is
 * (proxy sampling − proxy echo) − (direct sampling − direct echo): the second hop the request and
 * its answer take, without the call's own overhead.
 *
 *   bun bench/relay-bench.ts [--calls 200]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { EVERYTHING } from "../tests/helpers.ts";
import { percentile } from "./metrics.ts";
import { benchEnv, requireBinary } from "./proxy-process.ts";

function samplingClient() {
  const client = new Client({ name: "relay-bench", version: "1.0.0" }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    model: "bench",
    role: "assistant",
    content: { type: "text", text: "ok" },
  }));
  return client;
}

export async function measureRelay(calls = 200) {
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-relay-"));
  const configPath = join(work, "config.json");
  writeFileSync(
    configPath,
    JSON.stringify({ mcpServers: { everything: { command: "node", args: [EVERYTHING, "stdio"] } } }),
  );
  const direct = samplingClient();
  const proxied = samplingClient();
  try {
    await direct.connect(
      new StdioClientTransport({ command: "node", args: [EVERYTHING, "stdio"], stderr: "ignore" }),
    );
    await proxied.connect(
      new StdioClientTransport({
        command: requireBinary(),
        args: ["serve", "--config", configPath, "--data-dir", join(work, "data")],
        env: benchEnv(join(work, "home")),
        stderr: "ignore",
      }),
    );
    const paths = {
      "direct echo": () => direct.callTool({ name: "echo", arguments: { message: "hi" } }),
      "direct sampling": () =>
        direct.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hi", maxTokens: 5 } }),
      "proxy echo": () =>
        proxied.callTool({
          name: "call_tool",
          arguments: { name: "everything__echo", arguments: { message: "hi" } },
        }),
      "proxy sampling": () =>
        proxied.callTool({
          name: "call_tool",
          arguments: {
            name: "everything__trigger-sampling-request",
            arguments: { prompt: "hi", maxTokens: 5 },
          },
        }),
    };
    const times = Object.fromEntries(Object.keys(paths).map((label) => [label, [] as number[]]));
    for (const run of Object.values(paths)) await run(); // warm up, and the first search waits for indexing
    for (let i = 0; i < calls; i++) {
      for (const [label, run] of Object.entries(paths)) {
        const started = performance.now();
        const result = (await run()) as { isError?: boolean };
        if (result.isError) throw new Error(`${label} failed: ${JSON.stringify(result)}`);
        times[label]!.push(performance.now() - started);
      }
    }
    const p50 = (label: string) => percentile(times[label]!, 50);
    const rows = Object.keys(paths).map((label) => ({
      label,
      p50: p50(label),
      p95: percentile(times[label]!, 95),
    }));
    const relayMs = p50("proxy sampling") - p50("proxy echo") - (p50("direct sampling") - p50("direct echo"));
    return { calls, rows, relayMs };
  } finally {
    await direct.close().catch(() => undefined);
    await proxied.close().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
}

export function formatRelayReport(report: Awaited<ReturnType<typeof measureRelay>>): string {
  return [
    `sampling relayed through mcpproxy (server-everything over stdio, ${report.calls} calls each, interleaved)`,
    "",
    "| path | p50 | p95 |",
    "|---|---|---|",
    ...report.rows.map((row) => `| ${row.label} | ${row.p50.toFixed(2)} ms | ${row.p95.toFixed(2)} ms |`),
    "",
    `the relay adds ${report.relayMs.toFixed(2)} ms p50 to a sampling round trip (beyond the call's own overhead)`,
  ].join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { calls: { type: "string" } } });
  const report = await measureRelay(values.calls ? Number(values.calls) : 200);
  process.stdout.write(`${formatRelayReport(report)}\n`);
}
