#!/usr/bin/env bun
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ROOT } from "../scripts/compile.ts";
import { descendantsOf, memoryOf, quickStartPlace } from "./idle-rss-bench.ts";
import { percentile } from "./metrics.ts";
import { cpuSeconds, requireBinary, runBinary, startProxyStdio } from "./proxy-process.ts";

/**
 * One proxy per person (issue 38), measured with the quick start's servers
 * (`examples/mcp_config.json`: server-everything, server-memory and server-filesystem through npx),
 * as a person with three MCP clients open runs them:
 *
 * - **Three clients**: the processes and the memory (RSS summed over every process: the proxies,
 *   the bridges, the servers and the npx processes that started them) of three standalone
 *   `mcpproxy serve --standalone` over stdio, against one service (`mcpproxy start`) and three
 *   `mcpproxy serve` that attach to it as bridges; read `--settle-seconds` after each client listed
 *   its tools.
 * - **The bridge's cost per call**: `call_tool everything__echo` through a bridge (stdio → bridge →
 *   the service's streamable HTTP) against an SDK client's own HTTP session with the service; the
 *   wall time per call (p50, p90) and the CPU of the bridge and the service per call. Interleaved
 *   batches, so a busy machine weighs on both alike.
 * - **Time to the first tools/list**: from spawning `mcpproxy serve` to the answer of its first
 *   tools/list, standalone (with the index saved) and as a bridge.
 *
 *   bun bench/service-bench.ts [--settle-seconds 20] [--calls 300] [--starts 10]
 */

interface Tree {
  processes: number;
  rss: number;
  /** Proportional set size: a page several of them share (the binary's, a library's) counted once in all. */
  pss: number;
}

/** Pss of a live process in MiB, from /proc/PID/smaps_rollup. */
function pssOf(pid: number): number {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  return Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1]) / 1024;
}

/** The processes of each tree rooted at `pids` (children included) and their summed RSS and PSS in MiB. */
function treeOf(pids: number[]): Tree {
  const seen = new Set(pids.flatMap((pid) => [pid, ...descendantsOf(pid)]));
  let rss = 0;
  let pss = 0;
  for (const pid of seen) {
    try {
      rss += memoryOf(pid).rss;
      pss += pssOf(pid);
    } catch {}
  }
  return { processes: seen.size, rss, pss };
}

/** Three clients over stdio, standalone or attached; their process trees and summed RSS. */
async function threeClients(config: string, work: string, attached: boolean, settleMs: number) {
  const { env, dataDir } = quickStartPlace(work);
  const common = ["--config", config, "--data-dir", dataDir];
  let servicePid: number | undefined;
  if (attached) {
    const started = await runBinary(["start", ...common], env);
    if (started.code !== 0) throw new Error(`mcpproxy start failed: ${started.stderr}`);
    servicePid = JSON.parse(readFileSync(join(dataDir, "service.json"), "utf8")).pid;
  }
  const clients = [];
  try {
    for (let i = 0; i < 3; i++) {
      const client = await startProxyStdio(
        config,
        dataDir,
        env,
        requireBinary(),
        ROOT,
        attached ? [] : ["--standalone"],
      );
      clients.push(client);
      await client.client.listTools();
    }
    // Each client calls once, so that every standalone proxy has started its servers.
    for (const { client } of clients)
      await client.callTool({
        name: "call_tool",
        arguments: { name: "everything__echo", arguments: { message: "x" } },
      });
    await Bun.sleep(settleMs);
    const tree = treeOf([...clients.map((client) => client.pid), ...(servicePid ? [servicePid] : [])]);
    // The serve processes the clients launched, without the servers below them.
    const launched = clients.reduce((sum, client) => sum + memoryOf(client.pid).rss, 0);
    const launchedPss = clients.reduce((sum, client) => sum + pssOf(client.pid), 0);
    return { ...tree, launched, launchedPss };
  } finally {
    for (const client of clients) await client.close();
    if (attached) await runBinary(["stop", ...common], env);
  }
}

async function perCall(config: string, work: string, calls: number) {
  const { env, dataDir } = quickStartPlace(work);
  const common = ["--config", config, "--data-dir", dataDir];
  await runBinary(["start", ...common], env);
  const record = JSON.parse(readFileSync(join(dataDir, "service.json"), "utf8")) as {
    pid: number;
    url: string;
  };
  const token = readFileSync(join(dataDir, "http-token"), "utf8").trim();
  const bridged = await startProxyStdio(config, dataDir, env, requireBinary(), ROOT);
  const direct = new Client({ name: "direct", version: "1" });
  await direct.connect(
    new StreamableHTTPClientTransport(new URL(record.url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  const echo = {
    name: "call_tool",
    arguments: { name: "everything__echo", arguments: { message: "hello" } },
  };
  try {
    for (let i = 0; i < 30; i++) {
      await bridged.client.callTool(echo);
      await direct.callTool(echo);
    }
    const times = { bridge: [] as number[], direct: [] as number[] };
    const cpu = { bridge: 0, bridgeService: 0, direct: 0 };
    const batch = 25;
    for (let done = 0; done < calls; done += batch) {
      let service = cpuSeconds(record.pid);
      const own = cpuSeconds(bridged.pid);
      for (let i = 0; i < batch; i++) {
        const started = performance.now();
        await bridged.client.callTool(echo);
        times.bridge.push(performance.now() - started);
      }
      cpu.bridge += cpuSeconds(bridged.pid) - own;
      cpu.bridgeService += cpuSeconds(record.pid) - service;
      service = cpuSeconds(record.pid);
      for (let i = 0; i < batch; i++) {
        const started = performance.now();
        await direct.callTool(echo);
        times.direct.push(performance.now() - started);
      }
      cpu.direct += cpuSeconds(record.pid) - service;
    }
    const n = times.bridge.length;
    return {
      bridge: { p50: percentile(times.bridge, 50), p90: percentile(times.bridge, 90) },
      direct: { p50: percentile(times.direct, 50), p90: percentile(times.direct, 90) },
      cpuMs: {
        bridgeProcess: (cpu.bridge * 1000) / n,
        serviceViaBridge: (cpu.bridgeService * 1000) / n,
        serviceDirect: (cpu.direct * 1000) / n,
      },
    };
  } finally {
    await direct.close();
    await bridged.close();
    await runBinary(["stop", ...common], env);
  }
}

async function firstList(config: string, work: string, starts: number) {
  const { env, dataDir } = quickStartPlace(work);
  const common = ["--config", config, "--data-dir", dataDir];
  // The index saved first, as on any day after the first.
  await runBinary(["index", ...common], env);
  const once = async (args: string[]) => {
    const started = performance.now();
    const proxy = await startProxyStdio(config, dataDir, env, requireBinary(), ROOT, args);
    await proxy.client.listTools();
    const ms = performance.now() - started;
    await proxy.close();
    return ms;
  };
  const standalone: number[] = [];
  const bridge: number[] = [];
  await runBinary(["start", ...common], env);
  try {
    for (let i = 0; i < starts; i++) {
      standalone.push(await once(["--standalone"]));
      bridge.push(await once([]));
    }
  } finally {
    await runBinary(["stop", ...common], env);
  }
  return { standalone: percentile(standalone, 50), bridge: percentile(bridge, 50) };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      "settle-seconds": { type: "string", default: "20" },
      calls: { type: "string", default: "300" },
      starts: { type: "string", default: "10" },
      config: { type: "string", default: join(ROOT, "examples", "mcp_config.json") },
    },
  });
  const config = resolve(values.config);
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-service-bench-"));
  const out = (line: string) => process.stdout.write(`${line}\n`);
  try {
    Bun.spawnSync(["cat", requireBinary()], { stdout: "ignore" });
    const settleMs = Number(values["settle-seconds"]) * 1000;
    const before = await threeClients(config, join(work, "before"), false, settleMs);
    const after = await threeClients(config, join(work, "after"), true, settleMs);
    out(
      `Three MCP clients over stdio, ${values.config}, read ${values["settle-seconds"]} s after they listed and called:`,
    );
    const line = (what: string, tree: typeof before, of: string) =>
      out(
        `  ${what}: ${tree.processes} processes, RSS ${tree.rss.toFixed(0)} MiB, PSS ${tree.pss.toFixed(0)} MiB ` +
          `(${of}: RSS ${tree.launched.toFixed(0)}, PSS ${tree.launchedPss.toFixed(0)} MiB)`,
      );
    line("three standalone proxies", before, "the three proxies alone");
    line("one service + three bridges", after, "the three bridges");
    const calls = await perCall(config, join(work, "calls"), Number(values.calls));
    out(`call_tool everything__echo, ${values.calls} calls each, interleaved batches (ms):`);
    out(`  through a bridge: p50 ${calls.bridge.p50.toFixed(2)}, p90 ${calls.bridge.p90.toFixed(2)}`);
    out(`  a direct HTTP session: p50 ${calls.direct.p50.toFixed(2)}, p90 ${calls.direct.p90.toFixed(2)}`);
    out(
      `  CPU per call: bridge process ${calls.cpuMs.bridgeProcess.toFixed(2)} ms, the service ${calls.cpuMs.serviceViaBridge.toFixed(2)} ms ` +
        `(direct: ${calls.cpuMs.serviceDirect.toFixed(2)} ms)`,
    );
    const first = await firstList(config, join(work, "first"), Number(values.starts));
    out(`From spawning serve to its first tools/list answer, p50 of ${values.starts} (ms):`);
    out(`  standalone (index saved): ${first.standalone.toFixed(0)}; bridge: ${first.bridge.toFixed(0)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
