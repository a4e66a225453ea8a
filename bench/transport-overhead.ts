#!/usr/bin/env bun
/**
 * What the proxy adds to a call beyond stdio call_tool: a tool registered by dynamic routing and
 * called by its own name (stdio), and call_tool over streamable HTTP to an HTTP upstream. Each is
 * compared with a direct call over the same transport, interleaved in one run (call-overhead.ts
 * measures stdio call_tool, with plugins and beside the byte relay).
 *
 *   bun bench/transport-overhead.ts [--calls N]
 */
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  connectHttp,
  connectStdio,
  createSandbox,
  FIXTURE,
  startHttpFixture,
  startHttpProxy,
} from "../tests/helpers.ts";
import { percentile } from "./metrics.ts";

export interface TransportTiming {
  label: string;
  p50: number;
  p95: number;
  /** p50 over the p50 of the direct call on the same transport. */
  ratioP50: number;
}

export async function measureTransportOverhead(calls = 1000): Promise<TransportTiming[]> {
  const echo = { name: "echo", arguments: { message: "ping" } };
  const stdioDirect = new Client({ name: "bench", version: "1" });
  await stdioDirect.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE] }));
  const dynamicBox = createSandbox();
  dynamicBox.writeConfig({ mcpServers: { fx: { command: process.execPath, args: [FIXTURE] } } });
  const dynamic = await connectStdio(dynamicBox, {
    MCPPROXY_ROUTING_TYPE: "DYNAMIC",
    MCPPROXY_LOG_LEVEL: "warn",
  });
  const web = await startHttpFixture("web");
  const httpDirect = await connectHttp(new URL(web.url));
  const httpBox = createSandbox();
  httpBox.writeConfig({ mcpServers: { web: { url: web.url } } });
  const httpProxy = await startHttpProxy(httpBox);
  const viaHttpProxy = await connectHttp(new URL("/mcp", httpProxy.url));
  try {
    // Registers fx__echo in the dynamic session, as an agent's search would.
    await dynamic.client.callTool({ name: "retrieve_tools", arguments: { query: "echo a message back" } });
    const callers: { label: string; base: number; call: () => Promise<unknown> }[] = [
      { label: "stdio, direct to the server", base: 0, call: () => stdioDirect.callTool(echo) },
      {
        label: "stdio, dynamic routing: fx__echo by its own name",
        base: 0,
        call: () => dynamic.client.callTool({ ...echo, name: "fx__echo" }),
      },
      { label: "streamable HTTP, direct to the server", base: 2, call: () => httpDirect.callTool(echo) },
      {
        label: "streamable HTTP, call_tool through mcpproxy",
        base: 2,
        call: () =>
          viaHttpProxy.callTool({
            name: "call_tool",
            arguments: { name: "web__echo", arguments: { message: "ping" } },
          }),
      },
    ];
    for (const { label, call } of callers) {
      const first = (await call()) as { isError?: boolean; content?: unknown };
      if (first.isError) throw new Error(`${label}: ${JSON.stringify(first.content)}`);
    }
    for (let i = 0; i < 50; i++) for (const { call } of callers) await call();
    const times = callers.map((): number[] => []);
    for (let i = 0; i < calls; i++) {
      for (const [at, { call }] of callers.entries()) {
        const started = performance.now();
        await call();
        times[at]!.push(performance.now() - started);
      }
    }
    return callers.map(({ label, base }, at) => ({
      label,
      p50: percentile(times[at]!, 50),
      p95: percentile(times[at]!, 95),
      ratioP50: percentile(times[at]!, 50) / percentile(times[base]!, 50),
    }));
  } finally {
    await Promise.allSettled([
      stdioDirect.close(),
      dynamic.close(),
      httpDirect.close(),
      viaHttpProxy.close(),
    ]);
    await httpProxy.stop();
    web.stop();
    dynamicBox.cleanup();
    httpBox.cleanup();
  }
}

export function formatTransportReport(timings: readonly TransportTiming[], calls: number): string {
  const f = (n: number) => n.toFixed(3);
  return [
    `call overhead by routing and transport (${calls} echo calls each to the fixture server, interleaved):`,
    ...timings.map(
      (t) =>
        `  ${t.label}: p50 ${f(t.p50)} ms / p95 ${f(t.p95)} ms; p50 ratio to direct ${t.ratioP50.toFixed(2)}x`,
    ),
  ].join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { calls: { type: "string" } } });
  const calls = Number(values.calls ?? 1000);
  process.stdout.write(`${formatTransportReport(await measureTransportOverhead(calls), calls)}\n`);
}
