#!/usr/bin/env bun
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
/**
 * MCP revisions, as a client sees them (issue 22): how long a client takes to connect to
 * `mcpproxy serve` and get its tool list, by SDK and negotiation mode (the v1 SDK speaks 2025; a v2
 * client pinned to 2026-07-28; a v2 client in `auto` mode, which over stdio probes on a throw-away
 * process first), over stdio and HTTP; and what the proxy adds to a call in each revision, as the
 * p50 ratio to the same echo call made straight to the fixture server, all in one run.
 *
 *   bun bench/era-bench.ts [--connects N] [--calls N] [--binary PATH (default dist/mcpproxy)]
 */
import { StreamableHTTPClientTransport, Client as V2Client } from "@modelcontextprotocol/client";
import { StdioClientTransport as V2StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { BINARY, FIXTURE, watchOutput } from "../tests/helpers.ts";
import { percentile } from "./metrics.ts";
import { benchEnv } from "./proxy-process.ts";

type Mode = "v1" | "v2-pinned" | "v2-auto";
const MODES: Mode[] = ["v1", "v2-pinned", "v2-auto"];

interface Connected {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  listTools(): Promise<unknown>;
  close(): Promise<void>;
}

function v2(mode: "v2-pinned" | "v2-auto") {
  return new V2Client(
    { name: "era-bench", version: "1" },
    { versionNegotiation: { mode: mode === "v2-pinned" ? { pin: "2026-07-28" } : "auto" } },
  );
}

async function connectStdio(mode: Mode, argv: string[], env: Record<string, string>): Promise<Connected> {
  const [command, ...args] = argv as [string, ...string[]];
  if (mode === "v1") {
    const client = new V1Client({ name: "era-bench", version: "1" });
    await client.connect(new V1StdioClientTransport({ command, args, env, stderr: "ignore" }));
    return client as unknown as Connected;
  }
  const client = v2(mode);
  await client.connect(new V2StdioClientTransport({ command, args, env, stderr: "ignore" }));
  return client as unknown as Connected;
}

async function connectHttp(mode: Mode, url: URL): Promise<Connected> {
  if (mode === "v1") {
    const client = new V1Client({ name: "era-bench", version: "1" });
    await client.connect(new V1StreamableHTTPClientTransport(url));
    return client as unknown as Connected;
  }
  const client = v2(mode);
  await client.connect(new StreamableHTTPClientTransport(url));
  return client as unknown as Connected;
}

const median = (values: number[]) => percentile(values, 50);
const say = (line: string) => process.stdout.write(`${line}\n`);
const round = (value: number) => Math.round(value * 100) / 100;

async function main() {
  const { values } = parseArgs({
    options: {
      connects: { type: "string", default: "10" },
      calls: { type: "string", default: "300" },
      binary: { type: "string", default: BINARY },
    },
  });
  const connects = Number(values.connects);
  const calls = Number(values.calls);
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-era-"));
  const config = join(work, "config.json");
  writeFileSync(
    config,
    JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [FIXTURE] } } }),
  );
  const dataDir = join(work, "data");
  const env = benchEnv(work);
  const serve = [values.binary, "serve", "--config", config, "--data-dir", dataDir];
  try {
    // A first serve builds the index, so every measured connect starts from a saved one.
    const first = await connectStdio("v1", serve, env);
    await first.callTool({
      name: "call_tool",
      arguments: { name: "fx__echo", arguments: { message: "warm" } },
    });
    await first.close();

    // At info level, so serve says where it listens.
    const http = Bun.spawn([...serve, "--transport", "http", "--port", "0"], {
      env: { ...env, MCPPROXY_LOG_LEVEL: "info" },
      stderr: "pipe",
    });
    const url = new URL(await watchOutput(http.stderr).waitFor(/serving MCP at (http:\/\/\S+?);/, 30_000));

    say(`connect + tools/list, median of ${connects} (ms)`);
    for (const mode of MODES) {
      const stdio = await timeConnects(connects, () => connectStdio(mode, serve, env));
      const overHttp = await timeConnects(connects, () => connectHttp(mode, url));
      say(`  ${mode.padEnd(10)} stdio ${stdio}  http ${overHttp}`);
    }

    say(`\ncall_tool echo, ${calls} calls each, interleaved: p50 ms (ratio to the direct call)`);
    const direct = await connectStdio("v1", [process.execPath, FIXTURE], env);
    const clients: { label: string; client: Connected; proxied: boolean }[] = [
      { label: "direct (stdio)", client: direct, proxied: false },
    ];
    for (const mode of ["v1", "v2-pinned"] as const) {
      for (const [kind, connect] of [
        ["stdio", () => connectStdio(mode, serve, env)],
        ["http", () => connectHttp(mode, url)],
      ] as const) {
        const client = await connect().catch(() => undefined);
        if (client) clients.push({ label: `${mode} ${kind}`, client, proxied: true });
        else say(`  ${mode} ${kind}: cannot connect`);
      }
    }
    const times = new Map(clients.map(({ label }) => [label, [] as number[]]));
    for (let i = 0; i < calls; i++) {
      for (const { label, client, proxied } of clients) {
        const started = performance.now();
        await (proxied
          ? client.callTool({
              name: "call_tool",
              arguments: { name: "fx__echo", arguments: { message: "x" } },
            })
          : client.callTool({ name: "echo", arguments: { message: "x" } }));
        times.get(label)?.push(performance.now() - started);
      }
    }
    const base = median(times.get("direct (stdio)") ?? [1]);
    for (const [label, list] of times) {
      say(`  ${label.padEnd(16)} ${round(median(list))} (${round(median(list) / base)}x)`);
    }
    for (const { client } of clients) await client.close();
    http.kill();
    await http.exited;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The median time to connect and list tools, or why it cannot connect. */
async function timeConnects(count: number, connect: () => Promise<Connected>): Promise<string> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    let client: Connected;
    try {
      client = await connect();
      await client.listTools();
    } catch (error) {
      return `fails (${String((error as Error).message).slice(0, 80)})`;
    }
    times.push(performance.now() - started);
    await client.close();
  }
  return String(round(median(times)));
}

await main();
