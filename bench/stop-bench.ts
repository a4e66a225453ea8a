#!/usr/bin/env bun
/**
 * How fast the proxy stops, and what it leaves behind (figures, not a test):
 *  - `sdk-close`: the SDK client's close() (stdin closed, 2 s, SIGTERM, 2 s, SIGKILL) of a proxy
 *    whose server ignores stdin EOF and SIGTERM and has a helper: time to the proxy's exit, how it
 *    ended (code or the SDK's SIGKILL), and time until no server or helper is left;
 *  - `short-session`: a stdio session that ends as soon as it started, while servers (one slow to
 *    start) still connect: time from closing stdin to the exit, and "could not connect" lines.
 *
 *   bun bench/stop-bench.ts [BINARY] [ROUNDS]     (default dist/mcpproxy, 3 rounds)
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const ROOT = resolve(import.meta.dir, "..");
const binary = resolve(process.argv[2] ?? join(ROOT, "dist", "mcpproxy"));
const rounds = Number(process.argv[3] ?? 3);
const FIXTURE = join(ROOT, "tests", "fixtures", "fixture-server.ts");

const fixture = (...args: string[]) => ({ command: process.execPath, args: [FIXTURE, ...args] });

function processesMatching(token: string): number[] {
  const ps = new TextDecoder().decode(Bun.spawnSync(["ps", "-eo", "pid=,args="]).stdout);
  return ps
    .split("\n")
    .filter((line) => line.includes(token) && !line.includes("ps -eo"))
    .map((line) => Number.parseInt(line.trim(), 10));
}

function killAll(token: string): void {
  for (const pid of processesMatching(token)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone.
    }
  }
}

function sandbox(servers: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), "stop-bench-"));
  const config = join(dir, "mcp_config.json");
  writeFileSync(config, JSON.stringify({ mcpServers: servers }));
  return { dir, args: ["serve", "--config", config, "--data-dir", join(dir, "data")] };
}

async function sdkClose() {
  const token = `stop-bench-${crypto.randomUUID()}`;
  const box = sandbox({
    stubborn: fixture("--mode", "ignore-eof", "--ignore-sigterm", "--spawn-helper", "--name", `${token}-s`),
    plain: fixture("--spawn-helper", "--name", `${token}-p`),
  });
  const transport = new StdioClientTransport({
    command: binary,
    args: box.args,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: box.dir },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: "stop-bench", version: "1" });
  await client.connect(transport);
  while (!stderr.includes("2 of 2 servers indexed")) await Bun.sleep(20);
  const child = (transport as unknown as { _process: ChildProcess })._process;
  const started = performance.now();
  let exitMs = 0;
  child.once("exit", () => {
    exitMs = performance.now() - started;
  });
  await client.close();
  let goneMs: number | string = "left running (15 s)";
  while (performance.now() - started < 15_000) {
    if (processesMatching(token).length === 0) {
      goneMs = Math.round(performance.now() - started);
      break;
    }
    await Bun.sleep(25);
  }
  killAll(token);
  rmSync(box.dir, { recursive: true, force: true });
  return {
    proxyExitMs: Math.round(exitMs),
    endedBy: child.signalCode ?? `exit ${child.exitCode}`,
    allGoneMs: goneMs,
  };
}

async function shortSession() {
  const token = `stop-bench-${crypto.randomUUID()}`;
  const box = sandbox({
    first: fixture("--name", `${token}-1`),
    second: fixture("--name", `${token}-2`),
    slow: {
      ...fixture("--init-delay", "3000", "--ignore-sigterm", "--name", `${token}-slow`),
      timeoutMs: 60_000,
    },
  });
  const child = Bun.spawn([binary, ...box.args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: box.dir },
    stdin: "pipe",
    stdout: "ignore",
    stderr: "pipe",
  });
  let stderr = "";
  const reading = (async () => {
    for await (const chunk of child.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  while (!stderr.includes("serving MCP over stdio")) await Bun.sleep(10);
  const started = performance.now();
  child.stdin.end();
  await child.exited;
  const exitMs = Math.round(performance.now() - started);
  await reading;
  killAll(token);
  rmSync(box.dir, { recursive: true, force: true });
  return { exitMs, couldNotConnect: stderr.match(/could not connect/g)?.length ?? 0 };
}

process.stdout.write(`binary: ${binary}\n`);
for (let round = 1; round <= rounds; round++) {
  const figures = { round, sdkClose: await sdkClose(), shortSession: await shortSession() };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}
