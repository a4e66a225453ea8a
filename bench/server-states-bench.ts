import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import * as v from "valibot";
import { launchCatalog } from "./catalog-launcher.ts";
import { type EvalCatalog, evalSetPath, loadEvalCatalog, missingEvalSet } from "./eval-catalog.ts";
import { percentile } from "./metrics.ts";
import { BINARY, benchEnv, cpuSeconds, ROOT, runBinary, startProxyStdio } from "./proxy-process.ts";
import { replicateServers } from "./server-scale-bench.ts";

/**
 * What retrieve_tools costs by the number of tools and the state of their servers, up (serving)
 * or down (refusing connections), and what serve costs idle with thousands of servers down
 * (`npm run bench:scale -- --only states`). For each size the eval catalog is copied under
 * renamed servers (about 4.8 tools each: 10,000 tools on 2,065 servers, 100,000 on 20,650),
 * indexed once, then measured:
 *
 * - in process: the retrieve_tools handler (retrieveToolsCall) over the catalog, with a pool of
 *   every configured server in the state it settled in after one connect (all connected, or all
 *   failed);
 * - over stdio: `serve` from spawn to its answer to `initialize` (first answer) and to its first
 *   search (cold start), then the queries one by one while its servers connect (or fail and are
 *   retried) as they do; with `--settle-seconds N`, the
 *   queries again N seconds later, once the first pass over the servers is over (what a serve that
 *   has been running answers: down servers are then only retried in the background);
 * - `mcpproxy search` at that size, spawn to exit;
 * - idle: serve over stdio with the 10,000-tool config and every server down, the CPU it uses per
 *   minute (/proc), beside a serve with no servers at all (what any serve costs).
 *
 * With `--baseline DIR` (another checkout, built) every figure is measured for it too, in turn
 * with this one (the idle serves side by side), so a comparison is from one run on one machine.
 * Each run is bounded: queries (--queries), sizes (--sizes), the wait before the settled queries
 * (--settle-seconds), the idle minutes (--idle-minutes).
 */
export interface StatesOptions {
  sizes: readonly number[];
  queries: number;
  idleMinutes: number;
  /** Seconds after the first queries over stdio before they are asked again (0: not asked again). */
  settleSeconds?: number | undefined;
  /** Another checkout, built: measured in turn with this one. */
  baseline?: string | undefined;
}

interface Version {
  name: string;
  root: string;
  binary: string;
}

interface Latency {
  p50: number;
  p95: number;
}

export interface StatesRow {
  tools: number;
  servers: number;
  state: "up" | "down";
  version: string;
  inProcess: Latency;
  stdio: Latency;
  /** Over stdio again, `settleSeconds` later. */
  settled?: Latency | undefined;
  /** Spawn to the answer to `initialize`. */
  firstAnswerMs: number;
  /** Spawn to the answer to the first retrieve_tools. */
  coldStartMs: number;
}

export interface SearchRow {
  tools: number;
  version: string;
  wallMs: number;
  cpuMs: number;
}

export interface IdleRow {
  what: string;
  version: string;
  /** CPU % of one core, per minute. */
  perMinute: number[];
}

export interface StatesReport {
  rows: StatesRow[];
  search: SearchRow[];
  idle: IdleRow[];
  /** The config the idle serves ran: its tools, and its servers (all down). */
  idleTools: number;
  idleServers: number;
}

const latency = (values: readonly number[]): Latency => ({
  p50: percentile(values, 50),
  p95: percentile(values, 95),
});

/** A copy of the indexed data dir: serve writes there, and every run must start from the same one. */
function freshDataDir(from: string, work: string): string {
  const dir = mkdtempSync(join(work, "run-"));
  cpSync(from, dir, { recursive: true });
  return dir;
}

/** serve over stdio: spawn to the first answer, then each query in turn. */
async function overStdio(
  binary: string,
  configPath: string,
  dataDir: string,
  env: Record<string, string>,
  queries: readonly string[],
  settleSeconds = 0,
) {
  const spawned = performance.now();
  const { client } = await startProxyStdio(configPath, dataDir, env, binary);
  const firstAnswerMs = performance.now() - spawned;
  const asked = async () => {
    const times: number[] = [];
    for (const query of queries) {
      const started = performance.now();
      await client.callTool({ name: "retrieve_tools", arguments: { query, top_k: 5 } });
      times.push(performance.now() - started);
    }
    return latency(times);
  };
  try {
    await client.callTool({ name: "retrieve_tools", arguments: { query: "warm up" } });
    const coldStartMs = performance.now() - spawned;
    const stdio = await asked();
    if (settleSeconds <= 0) return { firstAnswerMs, coldStartMs, stdio };
    await Bun.sleep(settleSeconds * 1000);
    return { firstAnswerMs, coldStartMs, stdio, settled: await asked() };
  } finally {
    await client.close();
  }
}

/**
 * The retrieve_tools handler in process, from `root`'s sources: the catalog, and a pool of every
 * configured server after one connect of each (connected when they are up, failed when down).
 */
async function inProcess(root: string, configPath: string, dataDir: string, queries: readonly string[]) {
  const at = (path: string) => join(root, "src", path);
  const { loadConfig } = await import(at("config/load-config.ts"));
  const { openToolCatalog } = await import(at("index/tool-catalog.ts"));
  const { silentLogger } = await import(at("log.ts"));
  const { createUpstreamPool } = await import(at("upstream/upstream-pool.ts"));
  const { RESERVED_TOOL_NAMES, retrieveToolsArgs } = await import(at("server/tools/builtin-tools.ts"));
  const { retrieveToolsCall } = await import(at("server/tools/retrieve-tools-call.ts"));
  const config = loadConfig({ configFlag: configPath, env: benchEnv(join(dataDir, "home")), overrides: {} });
  const catalog = await openToolCatalog({
    dataDir,
    toolNameLimit: config.toolNameLimit,
    reservedNames: RESERVED_TOOL_NAMES,
    logger: silentLogger,
    readOnly: true,
  });
  const pool = createUpstreamPool({ servers: config.servers, logger: silentLogger });
  try {
    await pool.connectAll();
    const deps = {
      catalog,
      pool,
      logger: silentLogger,
      search: { topK: config.topK, minScore: config.minScore, adaptiveTopK: false },
      observe: {},
    };
    const schema = retrieveToolsArgs(config.topK);
    const times: number[] = [];
    for (const query of queries) {
      const asked = v.parse(schema, { query, top_k: 5 });
      const started = performance.now();
      await retrieveToolsCall(deps, asked, undefined, async () => undefined);
      times.push(performance.now() - started);
    }
    return latency(times);
  } finally {
    await pool.close();
    await catalog.close();
  }
}

/** `mcpproxy search` from spawn to exit: its wall time and the CPU it used. */
async function searchCommand(
  binary: string,
  configPath: string,
  dataDir: string,
  env: Record<string, string>,
) {
  const started = performance.now();
  const child = Bun.spawn(
    [binary, "search", "--config", configPath, "--data-dir", dataDir, "create an issue in a repository"],
    { env, stdout: "ignore", stderr: "ignore" },
  );
  await child.exited;
  const wallMs = performance.now() - started;
  const cpuMs = Number(child.resourceUsage()?.cpuTime.total ?? Number.NaN) / 1000;
  return { wallMs, cpuMs };
}

const median = (values: readonly number[]) => percentile(values, 50);

/** Serves side by side, idle, and the CPU each uses per minute. */
async function idleServes(
  serves: {
    what: string;
    version: Version;
    configPath: string;
    dataDir: string;
    env: Record<string, string>;
  }[],
  minutes: number,
): Promise<IdleRow[]> {
  const started = await Promise.all(
    serves.map(async (serve) => ({
      ...serve,
      ...(await startProxyStdio(serve.configPath, serve.dataDir, serve.env, serve.version.binary)),
    })),
  );
  try {
    const rows = started.map((serve) => ({
      what: serve.what,
      version: serve.version.name,
      perMinute: [] as number[],
    }));
    let before = started.map((serve) => cpuSeconds(serve.pid));
    for (let minute = 0; minute < minutes; minute++) {
      await Bun.sleep(60_000);
      const now = started.map((serve) => cpuSeconds(serve.pid));
      for (const [i, cpu] of now.entries()) rows[i]!.perMinute.push(((cpu - before[i]!) / 60) * 100);
      before = now;
    }
    return rows;
  } finally {
    await Promise.all(started.map((serve) => serve.client.close()));
  }
}

export async function runStatesBench(options: StatesOptions): Promise<StatesReport> {
  const evalFile = evalSetPath();
  if (!evalFile) throw new Error(`the catalogs are built from the eval set: ${missingEvalSet()}`);
  const source = loadEvalCatalog(evalFile);
  const versions: Version[] = [{ name: "this", root: ROOT, binary: BINARY }];
  if (options.baseline) {
    const root = resolve(options.baseline);
    versions.push({ name: "baseline", root, binary: join(root, "dist", "mcpproxy") });
  }
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-states-"));
  const env = benchEnv(join(work, "home"));
  const report: StatesReport = { rows: [], search: [], idle: [], idleTools: 0, idleServers: 0 };
  const queries = source.queries.map((q) => q.query).slice(0, options.queries);
  let idleSetup: { configPath: string; dataDir: string; tools: number; servers: number } | undefined;
  try {
    for (const tools of options.sizes) {
      const servers = Math.ceil(
        tools / (source.tools.length / new Set(source.tools.map((t) => t.server)).size),
      );
      const catalog: EvalCatalog = replicateServers(source, servers);
      catalog.tools.splice(tools);
      const dir = join(work, `${tools}`);
      mkdirSync(dir, { recursive: true });
      const file = join(dir, "catalog.json");
      writeFileSync(file, JSON.stringify(catalog));
      const launched = await launchCatalog(file, catalog, dir);
      const indexed = join(dir, "indexed");
      mkdirSync(indexed);
      let isUp = true;
      try {
        const run = await runBinary(["index", "--config", launched.configPath, "--data-dir", indexed], env);
        if (run.code !== 0 && run.code !== 1)
          throw new Error(`index of ${tools} tools failed:\n${run.stderr}`);
        const configured = new Set(catalog.tools.map((tool) => tool.server)).size;
        for (const state of ["up", "down"] as const) {
          if (state === "down" && isUp) {
            await launched.stop();
            isUp = false;
          }
          for (const version of versions) {
            const inProc = await inProcess(
              version.root,
              launched.configPath,
              freshDataDir(indexed, work),
              queries,
            );
            const stdio = await overStdio(
              version.binary,
              launched.configPath,
              freshDataDir(indexed, work),
              env,
              queries,
              options.settleSeconds,
            );
            report.rows.push({
              tools,
              servers: configured,
              state,
              version: version.name,
              inProcess: inProc,
              ...stdio,
            });
          }
        }
        const runs = new Map(
          versions.map((version) => [version.name, [] as { wallMs: number; cpuMs: number }[]]),
        );
        for (let i = 0; i < 3; i++) {
          for (const version of versions) {
            runs
              .get(version.name)!
              .push(await searchCommand(version.binary, launched.configPath, indexed, env));
          }
        }
        for (const [version, measured] of runs) {
          report.search.push({
            tools,
            version,
            wallMs: median(measured.map((m) => m.wallMs)),
            cpuMs: median(measured.map((m) => m.cpuMs)),
          });
        }
        if (!idleSetup || tools === 10_000)
          idleSetup = { configPath: launched.configPath, dataDir: indexed, tools, servers: configured };
      } finally {
        if (isUp) await launched.stop();
      }
    }
    if (idleSetup && options.idleMinutes > 0) {
      report.idleServers = idleSetup.servers;
      report.idleTools = idleSetup.tools;
      const empty = join(work, "empty.json");
      writeFileSync(empty, JSON.stringify({ mcpServers: {} }));
      const { configPath, dataDir } = idleSetup;
      report.idle = await idleServes(
        versions.flatMap((version) => [
          {
            what: `${idleSetup!.servers.toLocaleString("en")} servers down`,
            version,
            configPath,
            dataDir: freshDataDir(dataDir, work),
            env,
          },
          { what: "no servers", version, configPath: empty, dataDir: freshDataDir(dataDir, work), env },
        ]),
        options.idleMinutes,
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return report;
}

export function formatStatesReport(report: StatesReport, queries: number, settleSeconds = 0): string {
  const f = (n: number, digits = 2) => n.toFixed(digits);
  const settled = settleSeconds > 0;
  const lines = [
    `retrieve_tools by tools and servers' states (the eval catalog copied under renamed servers; top 5 over ${queries} of its queries)`,
    "",
    `| tools | servers | state | version | in process p50 / p95 | stdio p50 / p95 |${settled ? ` stdio ${settleSeconds} s later |` : ""} first answer | cold start (first search) |`,
    `|---|---|---|---|---|---|${settled ? "---|" : ""}---|---|`,
    ...report.rows.map(
      (r) =>
        `| ${r.tools.toLocaleString("en")} | ${r.servers.toLocaleString("en")} | ${r.state} | ${r.version} | ` +
        `${f(r.inProcess.p50)} / ${f(r.inProcess.p95)} ms | ${f(r.stdio.p50)} / ${f(r.stdio.p95)} ms | ` +
        `${settled && r.settled ? `${f(r.settled.p50)} / ${f(r.settled.p95)} ms | ` : settled ? "| " : ""}` +
        `${f(r.firstAnswerMs, 0)} ms | ${f(r.coldStartMs, 0)} ms |`,
    ),
    "",
    "`mcpproxy search` (median of 3, spawn to exit)",
    "",
    "| tools | version | wall | CPU |",
    "|---|---|---|---|",
    ...report.search.map(
      (r) =>
        `| ${r.tools.toLocaleString("en")} | ${r.version} | ${f(r.wallMs, 0)} ms | ${f(r.cpuMs, 0)} ms |`,
    ),
  ];
  if (report.idle.length > 0) {
    const minutes = report.idle[0]!.perMinute.length;
    lines.push(
      "",
      `Idle serve over stdio (the ${report.idleTools.toLocaleString("en")}-tool config), CPU % of one core per minute since start`,
      "",
      `| serve | version | ${Array.from({ length: minutes }, (_, i) => `min ${i + 1}`).join(" | ")} |`,
      `|---|---|${"---|".repeat(minutes)}`,
      ...report.idle.map(
        (r) => `| ${r.what} | ${r.version} | ${r.perMinute.map((p) => f(p, 2)).join(" | ")} |`,
      ),
    );
  }
  return lines.join("\n");
}
