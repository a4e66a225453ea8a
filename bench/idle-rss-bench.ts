#!/usr/bin/env bun
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
/**
 * The proxy process's own memory in an idle `mcpproxy serve` over stdio with the quick start's
 * servers (`examples/mcp_config.json`: server-everything, server-memory and server-filesystem
 * through `npx -y`), as a person who followed the quick start runs it: a fresh HOME and data dir,
 * a client that connects and lists the tools and then makes no call, read after `--settle-seconds`
 * (not its children's memory). Each binary in every round, interleaved, so a busy machine weighs on
 * every build alike; after the reading, a retrieve_tools for each server checks that it was indexed.
 *
 *   bun bench/idle-rss-bench.ts [--rounds 3] [--settle-seconds 45] [--config FILE] [--compare BINARY]...
 *
 * npx runs offline where it can: the fresh HOME's .npmrc points at the caller's npm cache
 * (`prefer-offline`), and serve runs in the repository, whose node_modules has server-everything.
 */
import { ROOT } from "../scripts/compile.ts";
import { BINARY, benchEnv, requireBinary, startProxyStdio } from "./proxy-process.ts";

/** What /proc says of a process's memory, in MiB. */
export interface MemoryReading {
  rss: number;
  anon: number;
  file: number;
  shmem: number;
}

/** VmRSS and its parts (RssAnon, RssFile, RssShmem) from /proc/PID/status, in MiB. */
export function memoryOf(pid: number): MemoryReading {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)\\s+kB`).exec(status)?.[1]) / 1024;
  return { rss: field("VmRSS"), anon: field("RssAnon"), file: field("RssFile"), shmem: field("RssShmem") };
}

/** The processes that descend from `pid` (the servers and the npx processes that started them). */
export function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  const walk = (parent: number) => {
    let children: string[] = [];
    try {
      children = readFileSync(`/proc/${parent}/task/${parent}/children`, "utf8").trim().split(/\s+/);
    } catch {}
    for (const child of children.filter(Boolean)) {
      found.push(Number(child));
      walk(Number(child));
    }
  };
  walk(pid);
  return found;
}

/** A query each quick-start server's tools answer, to check after the reading that it was indexed. */
const PROBES = {
  everything: "echo back the input message",
  memory: "create entities in the knowledge graph",
  filesystem: "read a text file from the allowed directories",
};

/**
 * A fresh HOME, data dir and example files under `work` for the quick start's servers, and the
 * environment serve runs with there. npx runs offline where it can: the HOME's .npmrc points at the
 * caller's npm cache (`prefer-offline`).
 */
export function quickStartPlace(work: string): { env: Record<string, string>; dataDir: string } {
  const home = join(work, "home");
  mkdirSync(home, { recursive: true });
  mkdirSync(join(work, "files"), { recursive: true });
  writeFileSync(
    join(home, ".npmrc"),
    `cache=${join(homedir(), ".npm")}\nprefer-offline=true\nupdate-notifier=false\nfund=false\naudit=false\n`,
  );
  const env = benchEnv(home, {
    MCPPROXY_EXAMPLE_DIR: join(work, "files"),
    MCPPROXY_EXAMPLE_MEMORY_FILE: join(work, "memory.jsonl"),
  });
  return { env, dataDir: join(work, "data") };
}

async function idleServe(binary: string, configPath: string, work: string, settleMs: number) {
  const { env, dataDir } = quickStartPlace(work);
  rmSync(dataDir, { recursive: true, force: true });
  const proxy = await startProxyStdio(configPath, dataDir, env, binary, ROOT);
  try {
    await proxy.client.listTools();
    await Bun.sleep(settleMs);
    const memory = memoryOf(proxy.pid);
    const processes = descendantsOf(proxy.pid).length;
    let indexed = 0;
    for (const [server, query] of Object.entries(PROBES)) {
      const found = await proxy.client.callTool({ name: "retrieve_tools", arguments: { query } });
      if (JSON.stringify(found).includes(`${server}__`)) indexed++;
    }
    return { ...memory, processes, indexed };
  } finally {
    await proxy.close();
  }
}

export async function measureIdleRss(options: {
  rounds: number;
  settleSeconds: number;
  config: string;
  compare: readonly string[];
}) {
  const binaries = [requireBinary(), ...options.compare.map((path) => resolve(path))];
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-idle-rss-"));
  try {
    const readings = binaries.map(() => [] as Awaited<ReturnType<typeof idleServe>>[]);
    for (let round = 0; round < options.rounds; round++) {
      for (const [i, binary] of binaries.entries()) {
        const dir = join(work, `${round}-${i}`);
        // Read whole first: the pages of the binary a serve maps on a fault depend on which of them
        // the page cache holds (the kernel maps the cached ones around the faulting page), so every
        // build is measured with all of its binary cached.
        Bun.spawnSync(["cat", binary], { stdout: "ignore" });
        const reading = await idleServe(binary, resolve(options.config), dir, options.settleSeconds * 1000);
        readings[i]!.push(reading);
        process.stderr.write(
          `round ${round + 1} ${binary === BINARY ? "dist/mcpproxy" : binary}: RSS ${reading.rss.toFixed(1)} MiB ` +
            `(anon ${reading.anon.toFixed(1)}, file ${reading.file.toFixed(1)}), ` +
            `${reading.indexed}/3 servers indexed, ${reading.processes} processes below\n`,
        );
      }
    }
    return binaries.map((binary, i) => ({ binary, readings: readings[i]! }));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "3" },
      "settle-seconds": { type: "string", default: "45" },
      config: { type: "string", default: join(ROOT, "examples", "mcp_config.json") },
      compare: { type: "string", multiple: true, default: [] },
    },
  });
  const rows = await measureIdleRss({
    rounds: Number(values.rounds),
    settleSeconds: Number(values["settle-seconds"]),
    config: values.config,
    compare: values.compare,
  });
  const range = (values: number[]) => `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`;
  process.stdout.write(
    `Idle serve over stdio, ${values.config}, ${values.rounds} interleaved rounds, read ${values["settle-seconds"]} s after tools/list (MiB, min–max):\n`,
  );
  for (const { binary, readings } of rows)
    process.stdout.write(
      `  ${binary === BINARY ? "dist/mcpproxy" : binary}: RSS ${range(readings.map((r) => r.rss))} ` +
        `(anon ${range(readings.map((r) => r.anon))}, file ${range(readings.map((r) => r.file))})\n`,
    );
}
