#!/usr/bin/env bun
/**
 * One retrieve_tools call with `queries` (a batch of 5) against 5 calls with one `query` each,
 * through the compiled binary with a real SDK client, over stdio and streamable HTTP, on the eval
 * catalog (its 491 servers served by bench/catalog-server.ts, indexed with `mcpproxy index`).
 * Each round takes 5 eval requests (seeded) and times, in turn: the batch, the 5 calls one after
 * another (an agent that waits for each answer), and the 5 calls sent at once. With
 * `--routing dynamic` the client also re-lists its tools after each list_changed, as a listening
 * client does. Bounded by rounds and by seconds per transport. Figures, not pass/fail.
 *
 *   bun bench/batch-search-bench.ts [EVAL.json] [--rounds 60] [--max-seconds 60] [--routing dynamic]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { connectHttp, type Sandbox, seededRandom, startHttpProxy } from "../tests/helpers.ts";
import { launchCatalog } from "./catalog-launcher.ts";
import { loadEvalCatalog, requireEvalSet } from "./eval-catalog.ts";
import { percentile } from "./metrics.ts";
import { benchEnv, runBinary, startProxyStdio } from "./proxy-process.ts";

const BATCH = 5;
const WARM_UP_ROUNDS = 5;

interface Timing {
  label: string;
  p50: number;
  p95: number;
}

interface TransportResult {
  transport: string;
  rounds: number;
  timings: Timing[];
}

/** Every list_changed answered with a tools/list, as a client that follows dynamic routing does. */
function relistOnChange(client: Client) {
  let pending: Promise<unknown> = Promise.resolve();
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    pending = client.listTools();
  });
  return () => pending;
}

async function measure(
  client: Client,
  groups: string[][],
  maxSeconds: number,
  settled: () => Promise<unknown>,
): Promise<{ rounds: number; timings: Timing[] }> {
  const search = async (args: Record<string, unknown>) => {
    const result = await client.callTool({ name: "retrieve_tools", arguments: args });
    if (result.isError) throw new Error(JSON.stringify(result.content));
    return result.structuredContent as { results?: unknown[]; tools?: unknown[] };
  };
  const modes: [string, (queries: string[]) => Promise<unknown>][] = [
    [`1 call with queries (${BATCH})`, (queries) => search({ queries })],
    [
      `${BATCH} calls, one after another`,
      async (queries) => {
        for (const query of queries) await search({ query });
      },
    ],
    [`${BATCH} calls at once`, (queries) => Promise.all(queries.map((query) => search({ query })))],
  ];
  // The batch answers what the single calls answer, list for list.
  const first = groups[0]!;
  const batch = (await search({ queries: first })).results;
  const singles = [];
  for (const query of first) singles.push(await search({ query }));
  if (JSON.stringify(batch?.map(withoutRouting)) !== JSON.stringify(singles.map(withoutRouting))) {
    throw new Error("the batch's lists differ from the single calls' answers");
  }
  const times = modes.map((): number[] => []);
  const deadline = performance.now() + maxSeconds * 1000;
  let rounds = 0;
  for (const [round, queries] of groups.entries()) {
    if (performance.now() > deadline) break;
    // The order of the modes turns each round, so none always runs on a warmer process.
    for (let m = 0; m < modes.length; m++) {
      const at = (m + round) % modes.length;
      const started = performance.now();
      await modes[at]![1](queries);
      await settled();
      if (round >= WARM_UP_ROUNDS) times[at]!.push(performance.now() - started);
    }
    if (round >= WARM_UP_ROUNDS) rounds++;
  }
  return {
    rounds,
    timings: modes.map(([label], at) => ({
      label,
      p50: percentile(times[at]!, 50),
      p95: percentile(times[at]!, 95),
    })),
  };
}

/** A list as the request alone gets it: what a session registered is the call's, not the list's. */
function withoutRouting(list: unknown) {
  const { registered: _, connecting: __, ...rest } = list as Record<string, unknown>;
  return rest;
}

export async function runBatchSearchBench(
  file: string,
  options: { rounds: number; maxSeconds: number; routing: string },
): Promise<TransportResult[]> {
  const catalog = loadEvalCatalog(file);
  const random = seededRandom(24);
  const queries = catalog.queries.map((q) => q.query).sort(() => random() - 0.5);
  const groups: string[][] = [];
  for (
    let i = 0;
    i + BATCH <= queries.length && groups.length < options.rounds + WARM_UP_ROUNDS;
    i += BATCH
  ) {
    groups.push(queries.slice(i, i + BATCH));
  }
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-batch-"));
  const launched = await launchCatalog(resolve(file), catalog, work);
  const dataDir = join(work, "data");
  const env = benchEnv(join(work, "home"), { MCPPROXY_ROUTING_TYPE: options.routing });
  const results: TransportResult[] = [];
  try {
    const indexed = await runBinary(["index", "--config", launched.configPath, "--data-dir", dataDir], env);
    if (indexed.code !== 0) throw new Error(`mcpproxy index failed:\n${indexed.stderr}`);
    const stdio = await startProxyStdio(launched.configPath, dataDir, env);
    try {
      const settled = options.routing === "dynamic" ? relistOnChange(stdio.client) : async () => {};
      results.push({
        transport: "stdio",
        ...(await measure(stdio.client, groups, options.maxSeconds, settled)),
      });
    } finally {
      await stdio.close();
    }
    const sandbox = {
      configPath: launched.configPath,
      dataDir,
      // startHttpProxy reads the address from the info line.
      env: (extra: Record<string, string> = {}) => ({ ...env, MCPPROXY_LOG_LEVEL: "info", ...extra }),
    } as unknown as Sandbox;
    const http = await startHttpProxy(sandbox);
    try {
      const client = await connectHttp(http.url);
      try {
        const settled = options.routing === "dynamic" ? relistOnChange(client) : async () => {};
        results.push({
          transport: "streamable HTTP",
          ...(await measure(client, groups, options.maxSeconds, settled)),
        });
      } finally {
        await client.close();
      }
    } finally {
      await http.stop();
    }
  } finally {
    await launched.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return results;
}

export function formatBatchSearchReport(results: TransportResult[], routing: string): string {
  const lines = [
    `retrieve_tools, ${BATCH} eval requests per round, ${routing} routing (ms; p50 / p95 per round)`,
    "",
    "| transport | rounds | mode | p50 | p95 | p50 vs the batch |",
    "|---|---|---|---|---|---|",
  ];
  for (const { transport, rounds, timings } of results) {
    const batch = timings[0]!.p50;
    for (const { label, p50, p95 } of timings) {
      lines.push(
        `| ${transport} | ${rounds} | ${label} | ${p50.toFixed(2)} | ${p95.toFixed(2)} | ${(p50 / batch).toFixed(2)}× |`,
      );
    }
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    options: {
      rounds: { type: "string", default: "60" },
      "max-seconds": { type: "string", default: "60" },
      routing: { type: "string", default: "call-tool" },
    },
    allowPositionals: true,
  });
  const file = requireEvalSet(positionals[0]);
  const results = await runBatchSearchBench(file, {
    rounds: Number(values.rounds),
    maxSeconds: Number(values["max-seconds"]),
    routing: values.routing!,
  });
  process.stdout.write(`${formatBatchSearchReport(results, values.routing!)}\n`);
}
