#!/usr/bin/env bun
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
/**
 * What a command costs before it does its work: `mcpproxy --version`, `--help`, a lexical `search`
 * against the eval set's 2,375 tools, and serve's RSS once idle (stdio, three fixture servers,
 * their tools indexed into a fresh data dir, then 3 s quiet), each against a bare
 * `bun build --compile` of a one-line file made by the same Bun (`--tools 10000`: search the eval
 * catalog replicated to that many, as bench:scale does). CPU time (user + system of the
 * measured process) and wall time, interleaved round by round so a busy machine slows every binary
 * alike; ratios to the bare binary. `--compare BINARY` (repeatable) runs other builds in the same
 * rounds: a before and after in one run.
 *
 *   bun bench/startup-bench.ts [EVAL.json] [--rounds 20] [--serve-rounds 3] [--tools N] [--compare BINARY]...
 *
 * Without the eval set, search is left out and the rest runs.
 */
import { fixtureEntry } from "../tests/helpers.ts";
import { launchCatalog } from "./catalog-launcher.ts";
import { evalSetPath, loadEvalCatalog, missingEvalSet } from "./eval-catalog.ts";
import { percentile } from "./metrics.ts";
import {
  BINARY,
  benchEnv,
  cpuSeconds,
  currentRssMiB,
  requireBinary,
  startProxyStdio,
} from "./proxy-process.ts";
import { replicateCatalog } from "./scale-bench.ts";

const QUERY = "create an issue in the bug tracker";

interface Sample {
  cpuMs: number;
  wallMs: number;
}

interface BinaryRow {
  binary: string;
  bytes: number;
  /** Per command line (--version, --help, search): medians over the rounds, CPU as a ratio to the bare binary's. */
  cases: Record<string, Sample & { cpuRatio: number }>;
  /** serve over stdio, idle: RSS in MiB and the CPU it took to get there, medians. */
  serve: { rssMiB: number; cpuMs: number };
}

export interface StartupReport {
  rounds: number;
  /** The tools search ranks; undefined without the eval set (search left out). */
  tools: number | undefined;
  bare: Sample & { rssMiB: number };
  rows: BinaryRow[];
}

/** A one-line program compiled by the same Bun: what any compiled binary costs to start. */
function compileBare(dir: string): string {
  const source = join(dir, "bare.ts");
  // `wait` keeps it running, so its idle RSS can be read like serve's.
  writeFileSync(
    source,
    'if (process.argv[2] === "wait") setInterval(() => {}, 1000); else console.log("mcpproxy");\n',
  );
  const outfile = join(dir, "bare");
  const built = Bun.spawnSync([process.execPath, "build", "--compile", source, "--outfile", outfile], {
    stdout: "ignore",
    stderr: "pipe",
  });
  if (built.exitCode !== 0) throw new Error(`bun build --compile of the bare file failed: ${built.stderr}`);
  return outfile;
}

async function timed(argv: string[], env: Record<string, string>): Promise<Sample> {
  const started = performance.now();
  const child = Bun.spawn(argv, { env, stdout: "pipe", stderr: "pipe" });
  const [, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  const wallMs = performance.now() - started;
  if (code !== 0) throw new Error(`${argv.join(" ")} exited ${code}: ${stderr}`);
  return { cpuMs: Number(child.resourceUsage()?.cpuTime.total ?? Number.NaN) / 1000, wallMs };
}

/** serve over stdio in a fresh data dir: RSS once the fixtures' tools are indexed and it has been quiet 3 s. */
async function idleServe(binary: string, configPath: string, dataDir: string, env: Record<string, string>) {
  rmSync(dataDir, { recursive: true, force: true });
  const proxy = await startProxyStdio(configPath, dataDir, env, binary);
  try {
    for (let tries = 0; tries < 200; tries++) {
      const result = await proxy.client.callTool({ name: "retrieve_tools", arguments: { query: "echo" } });
      if (JSON.stringify(result).includes("fx3__echo")) break;
      await Bun.sleep(100);
    }
    await Bun.sleep(3000);
    return { rssMiB: currentRssMiB(proxy.pid), cpuMs: cpuSeconds(proxy.pid) * 1000 };
  } finally {
    await proxy.close();
  }
}

export async function measureStartup(
  options: {
    evalSet?: string;
    rounds?: number;
    serveRounds?: number;
    /** Search this many tools: the eval catalog replicated (default: the catalog as it is). */
    tools?: number;
    compare?: readonly string[];
  } = {},
): Promise<StartupReport> {
  const rounds = options.rounds ?? 20;
  const binaries = [requireBinary(), ...(options.compare ?? []).map((path) => resolve(path))];
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-startup-"));
  try {
    const bare = compileBare(work);
    const env = benchEnv(join(work, "home"), { MCPPROXY_SEARCH_MODE: "lexical", MCPPROXY_EMBEDDER: "BM25" });
    const cases: Record<string, (binary: string, i: number) => string[]> = {
      "--version": (binary) => [binary, "--version"],
      "--help": (binary) => [binary, "--help"],
    };
    let tools: number | undefined;
    if (options.evalSet) {
      let catalog = loadEvalCatalog(options.evalSet);
      let catalogFile = options.evalSet;
      if (options.tools && options.tools !== catalog.tools.length) {
        catalog = replicateCatalog(catalog, options.tools);
        catalogFile = join(work, "catalog.json");
        writeFileSync(catalogFile, JSON.stringify(catalog));
      }
      tools = catalog.tools.length;
      const launched = await launchCatalog(catalogFile, catalog, work);
      try {
        // Each binary searches an index it made itself.
        for (const [i, binary] of binaries.entries())
          await timed(
            [binary, "index", "--config", launched.configPath, "--data-dir", join(work, `data-${i}`)],
            env,
          );
      } finally {
        await launched.stop();
      }
      cases.search = (binary, i) => [
        ...[binary, "search", QUERY, "--config", launched.configPath],
        ...["--data-dir", join(work, `data-${i}`)],
      ];
    }

    const samples = new Map<string, Sample[]>();
    const add = (key: string, sample: Sample) => samples.set(key, [...(samples.get(key) ?? []), sample]);
    for (let round = 0; round < rounds; round++) {
      add("bare", await timed([bare], env));
      for (const [name, argv] of Object.entries(cases))
        for (const [i, binary] of binaries.entries()) add(`${i} ${name}`, await timed(argv(binary, i), env));
    }
    const median = (values: number[]) => percentile(values, 50);
    const medianOf = (key: string, field: keyof Sample) =>
      median((samples.get(key) ?? []).map((s) => s[field]));

    const serveConfig = join(work, "serve.json");
    writeFileSync(
      serveConfig,
      JSON.stringify({ mcpServers: { fx1: fixtureEntry(), fx2: fixtureEntry(), fx3: fixtureEntry() } }),
    );
    const serves = binaries.map(() => [] as { rssMiB: number; cpuMs: number }[]);
    const bareRss: number[] = [];
    for (let round = 0; round < (options.serveRounds ?? 3); round++) {
      const idle = Bun.spawn([bare, "wait"], { stdout: "ignore" });
      await Bun.sleep(1000);
      bareRss.push(currentRssMiB(idle.pid));
      idle.kill();
      await idle.exited;
      for (const [i, binary] of binaries.entries())
        serves[i]!.push(await idleServe(binary, serveConfig, join(work, `serve-${i}`), env));
    }

    const bareCpu = medianOf("bare", "cpuMs");
    return {
      rounds,
      tools,
      bare: { cpuMs: bareCpu, wallMs: medianOf("bare", "wallMs"), rssMiB: median(bareRss) },
      rows: binaries.map((binary, i) => ({
        binary,
        bytes: statSync(binary).size,
        cases: Object.fromEntries(
          Object.keys(cases).map((name) => {
            const cpuMs = medianOf(`${i} ${name}`, "cpuMs");
            return [name, { cpuMs, wallMs: medianOf(`${i} ${name}`, "wallMs"), cpuRatio: cpuMs / bareCpu }];
          }),
        ),
        serve: {
          rssMiB: median(serves[i]!.map((run) => run.rssMiB)),
          cpuMs: median(serves[i]!.map((run) => run.cpuMs)),
        },
      })),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function formatStartupReport(report: StartupReport): string {
  const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "-");
  const { bare } = report;
  const lines = [
    `Start-up, ${report.rounds} interleaved rounds (medians; CPU = user + system of the process; ` +
      `search: lexical, ${report.tools === undefined ? "left out: no eval set" : `${report.tools} tools`}):`,
    `  bare compiled Bun binary: ${f(bare.cpuMs)} ms CPU, ${f(bare.wallMs)} ms wall, idle RSS ${f(bare.rssMiB)} MiB`,
  ];
  for (const row of report.rows) {
    lines.push(`  ${row.binary === BINARY ? "dist/mcpproxy" : row.binary} (${f(row.bytes / 1e6)} MB):`);
    for (const [name, c] of Object.entries(row.cases))
      lines.push(
        `    ${name.padEnd(10)} ${f(c.cpuMs)} ms CPU (${f(c.cpuRatio)}× bare), ${f(c.wallMs)} ms wall`,
      );
    lines.push(
      `    serve, idle: RSS ${f(row.serve.rssMiB)} MiB (${f(row.serve.rssMiB / bare.rssMiB)}× bare), ` +
        `${f(row.serve.cpuMs, 0)} ms CPU to get there`,
    );
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    options: {
      rounds: { type: "string", default: "20" },
      "serve-rounds": { type: "string", default: "3" },
      tools: { type: "string" },
      compare: { type: "string", multiple: true },
    },
    allowPositionals: true,
  });
  const evalSet = evalSetPath(positionals[0]);
  if (!evalSet) process.stderr.write(`search left out: ${missingEvalSet(positionals[0])}\n`);
  const report = await measureStartup({
    evalSet,
    rounds: Number(values.rounds),
    serveRounds: Number(values["serve-rounds"]),
    ...(values.tools ? { tools: Number(values.tools) } : {}),
    compare: values.compare,
  });
  process.stdout.write(`${formatStartupReport(report)}\n`);
}
