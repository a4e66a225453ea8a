#!/usr/bin/env bun
/**
 * Speed and size at 10,000 tools: the eval catalog replicated under renamed servers, indexed
 * through the compiled binary from real HTTP MCP servers, then measured per embedder:
 * index build time, index size on disk, load time in process, search p50/p95 in process,
 * retrieve_tools p50/p95 over MCP stdio, cold start (spawn → first answer from the persisted
 * index, upstreams down) and the serve process's peak RSS. Figures, not pass/fail.
 *
 * Then indexing speed by the number of configured servers (bench/server-scale-bench.ts), and
 * retrieve_tools at 10,000 and 100,000 tools with their servers up and down, `mcpproxy search`, and
 * an idle serve with 2,065 servers down (bench/server-states-bench.ts; --baseline DIR measures
 * another built checkout in turn with this one).
 *
 *   npm run bench:scale [-- --tools 10000 --queries 500 --only bm25 --table DIR]
 *   npm run bench:scale -- --only servers [--servers 2000,20000 --max-seconds 300]
 *   npm run bench:scale -- --only states [--sizes 10000,100000 --queries 200 --settle-seconds 0 --idle-minutes 5 --baseline DIR]
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config/load-config.ts";
import { createEmbedder } from "../src/index/embedders/create-embedder.ts";
import { openToolCatalog } from "../src/index/tool-catalog.ts";
import { createLogger } from "../src/log.ts";
import { RESERVED_TOOL_NAMES } from "../src/server/tools/builtin-tools.ts";
import { modelDir, startEmbeddingsServer } from "../tests/model-assets.ts";
import { launchCatalog } from "./catalog-launcher.ts";
import { type EvalCatalog, evalSetPath, loadEvalCatalog, missingEvalSet } from "./eval-catalog.ts";
import { percentile } from "./metrics.ts";
import { benchEnv, peakRssMiB, runBinary, startProxyStdio } from "./proxy-process.ts";
import { formatServerScaleReport, runServerScaleBench } from "./server-scale-bench.ts";
import { formatStatesReport, runStatesBench } from "./server-states-bench.ts";

export interface ScaleVariant {
  name: string;
  env: Record<string, string>;
}

export interface ScaleRow {
  variant: string;
  indexSeconds: number;
  indexMiB: number;
  loadMs: number;
  embedderLoadMs: number;
  inProcess: { p50: number; p95: number };
  stdio: { p50: number; p95: number };
  coldStartMs: number;
  peakRssMiB: number;
}

/** The eval catalog repeated under renamed servers ("<server> #2", …) up to `size` tools. */
export function replicateCatalog(catalog: EvalCatalog, size: number): EvalCatalog {
  const tools: EvalCatalog["tools"] = [];
  for (let copy = 1; tools.length < size; copy++) {
    for (const tool of catalog.tools) {
      if (tools.length >= size) break;
      tools.push({ ...tool, server: copy === 1 ? tool.server : `${tool.server} #${copy}` });
    }
  }
  return { tools, queries: catalog.queries };
}

function dirMiB(dir: string): number {
  let bytes = 0;
  for (const name of readdirSync(dir)) {
    const stat = statSync(join(dir, name));
    if (stat.isFile()) bytes += stat.size;
  }
  return bytes / 2 ** 20;
}

export async function runScaleBench(
  options: { tools?: number; queries?: number; only?: string; table?: string } = {},
): Promise<ScaleRow[]> {
  const evalFile = evalSetPath();
  if (!evalFile) throw new Error(`the 10k corpus is built from the eval set: ${missingEvalSet()}`);
  const size = options.tools ?? 10_000;
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-scale-"));
  const corpus = replicateCatalog(loadEvalCatalog(evalFile), size);
  const corpusFile = join(work, "corpus.json");
  writeFileSync(corpusFile, JSON.stringify(corpus));
  const queries = corpus.queries.map((q) => q.query);
  const stdioQueries = queries.slice(0, options.queries ?? 500);
  const embeddings = await startEmbeddingsServer();

  const variants: ScaleVariant[] = [
    { name: "BM25", env: { MCPPROXY_SEARCH_MODE: "lexical" } },
    // The default: BM25, and the built-in encoder for the requests BM25 finds too little of. The
    // cold start's first request ("warm up") is one of those, so it includes loading the encoder.
    { name: "auto (the default: BM25, USE for weak requests)", env: {} },
  ];
  const glove = modelDir("glove-sif-50k-f16");
  if (glove)
    variants.push({
      name: "HF static (glove-sif-50k)",
      env: { MCPPROXY_EMBEDDER: "HF", MCPPROXY_HF_MODEL: glove },
    });
  const tinyBert = modelDir("tiny-random-bert-onnx");
  if (tinyBert)
    variants.push({
      name: "HF ONNX (tiny BERT, q8)",
      env: { MCPPROXY_EMBEDDER: "HF", MCPPROXY_HF_MODEL: tinyBert },
    });
  variants.push({ name: "USE (built-in sentence encoder)", env: { MCPPROXY_EMBEDDER: "USE" } });
  // --table DIR: a static table distilled from it (scripts/distill-use-table.ts).
  if (options.table)
    variants.push({
      name: "HF static (table distilled from USE)",
      env: { MCPPROXY_EMBEDDER: "HF", MCPPROXY_HF_MODEL: options.table },
    });
  variants.push({
    name: "OPENAI (127.0.0.1 fixture, 64 dims)",
    env: {
      MCPPROXY_EMBEDDER: "OPENAI",
      MCPPROXY_OPENAI_BASE_URL: embeddings.url,
      MCPPROXY_OPENAI_MODEL: "fixture",
    },
  });

  if (options.only) {
    const wanted = options.only.toLowerCase();
    variants.splice(0, variants.length, ...variants.filter((v) => v.name.toLowerCase().includes(wanted)));
  }
  const rows: ScaleRow[] = [];
  try {
    const launched = await launchCatalog(corpusFile, corpus, work);
    const indexSeconds = new Map<string, number>();
    const dataDirs = new Map<string, string>();
    try {
      for (const variant of variants) {
        const dataDir = join(work, `data-${dataDirs.size}`);
        mkdirSync(dataDir, { recursive: true });
        const env = benchEnv(join(work, "home"), variant.env);
        const indexed = await runBinary(
          ["index", "--config", launched.configPath, "--data-dir", dataDir],
          env,
        );
        if (indexed.code !== 0)
          throw new Error(`index (${variant.name}) failed:\n${indexed.stdout}\n${indexed.stderr}`);
        indexSeconds.set(variant.name, indexed.ms / 1000);
        dataDirs.set(variant.name, dataDir);
      }
    } finally {
      // Measured with every upstream down: the answers come from the persisted index alone.
      await launched.stop();
    }

    for (const variant of variants) {
      const dataDir = dataDirs.get(variant.name)!;
      const env = benchEnv(join(work, "home"), variant.env);
      const logger = createLogger({ level: "error" });
      // The settings exactly as the binary resolves them from this environment.
      const config = loadConfig({
        configFlag: launchedConfig(work),
        env,
        overrides: { dataDir: { value: dataDir, flag: "--data-dir" } },
      });
      let started = performance.now();
      const isAuto = config.search.mode === "auto";
      const embedder = await createEmbedder(config, env, isAuto);
      const embedderLoadMs = performance.now() - started;
      started = performance.now();
      const catalog = await openToolCatalog({
        dataDir,
        toolNameLimit: config.toolNameLimit,
        reservedNames: RESERVED_TOOL_NAMES,
        logger,
        embedder,
        vectorUse: isAuto ? "fallback" : "always",
        vectorWeight: config.vectorWeight,
      });
      const loadMs = performance.now() - started;
      const latencies: number[] = [];
      for (const query of queries) {
        const t = performance.now();
        await catalog.search(query, 5, config.minScore);
        latencies.push(performance.now() - t);
      }
      await catalog.close();

      const spawned = performance.now();
      const proxy = await startProxyStdio(launchedConfig(work), dataDir, env);
      await proxy.client.callTool({ name: "retrieve_tools", arguments: { query: "warm up" } });
      const coldStartMs = performance.now() - spawned;
      const stdio: number[] = [];
      for (const query of stdioQueries) {
        const t = performance.now();
        await proxy.client.callTool({ name: "retrieve_tools", arguments: { query, top_k: 5 } });
        stdio.push(performance.now() - t);
      }
      const rss = peakRssMiB(proxy.pid);
      await proxy.close();
      rows.push({
        variant: variant.name,
        indexSeconds: indexSeconds.get(variant.name)!,
        indexMiB: dirMiB(dataDir),
        loadMs,
        embedderLoadMs,
        inProcess: { p50: percentile(latencies, 50), p95: percentile(latencies, 95) },
        stdio: { p50: percentile(stdio, 50), p95: percentile(stdio, 95) },
        coldStartMs,
        peakRssMiB: rss,
      });
    }
  } finally {
    embeddings.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}

/** The config the catalog launcher wrote; its servers are down by now, as intended. */
const launchedConfig = (work: string) => join(work, "mcp_config.json");

export function formatScaleReport(rows: readonly ScaleRow[], tools: number): string {
  const f = (n: number, digits = 2) => n.toFixed(digits);
  return [
    `${tools} tools (the eval catalog replicated under renamed servers); search = top 5 over the eval's 1,984 queries`,
    "",
    "| embedder | index build | index on disk | load in process (+ model) | search in process p50 / p95 | retrieve_tools stdio p50 / p95 | cold start | serve peak RSS |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.variant} | ${f(r.indexSeconds, 1)} s | ${f(r.indexMiB, 1)} MiB | ${f(r.loadMs, 0)} ms (+ ${f(r.embedderLoadMs, 0)} ms) | ` +
        `${f(r.inProcess.p50)} / ${f(r.inProcess.p95)} ms | ${f(r.stdio.p50)} / ${f(r.stdio.p95)} ms | ${f(r.coldStartMs, 0)} ms | ${f(r.peakRssMiB, 0)} MiB |`,
    ),
  ].join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      tools: { type: "string" },
      queries: { type: "string" },
      only: { type: "string" },
      servers: { type: "string" },
      "max-seconds": { type: "string" },
      table: { type: "string" },
      sizes: { type: "string" },
      "idle-minutes": { type: "string" },
      "settle-seconds": { type: "string" },
      baseline: { type: "string" },
    },
  });
  if (values.only !== "servers" && values.only !== "states") {
    const tools = Number(values.tools ?? 10_000);
    const rows = await runScaleBench({
      tools,
      queries: Number(values.queries ?? 500),
      ...(values.only ? { only: values.only } : {}),
      ...(values.table ? { table: values.table } : {}),
    });
    process.stdout.write(`${formatScaleReport(rows, tools)}\n\n`);
  }
  if (!values.only || values.only === "servers") {
    const counts = (values.servers ?? "2000,20000").split(",").map(Number);
    const maxSeconds = Number(values["max-seconds"] ?? 300);
    process.stdout.write(
      `${formatServerScaleReport(await runServerScaleBench(counts, maxSeconds), maxSeconds)}\n`,
    );
  }
  if (!values.only || values.only === "states") {
    const queries = Number(values.queries ?? 200);
    const settleSeconds = Number(values["settle-seconds"] ?? 0);
    const report = await runStatesBench({
      sizes: (values.sizes ?? "10000,100000").split(",").map(Number),
      queries,
      idleMinutes: Number(values["idle-minutes"] ?? 5),
      settleSeconds,
      baseline: values.baseline,
    });
    process.stdout.write(`\n${formatStatesReport(report, queries, settleSeconds)}\n`);
  }
}
