#!/usr/bin/env bun
/**
 * Retrieval eval through the real proxy. Two modes:
 *  - a catalog file (the format of eval-catalog.ts; the eval set when none is given, MCPPROXY_EVAL_SET): its servers are served as real MCP servers over
 *    HTTP by one process, indexed with the compiled `mcpproxy index`, and every query is asked
 *    through `retrieve_tools` over MCP stdio;
 *  - your own setup: `--config mcp_config.json --queries queries.json` indexes the servers of your
 *    config and asks your queries. queries.json is `{"queries": [{"query": "…", "expected":
 *    ["server/tool", …]}]}`, where `expected` lists the tools that would be a right answer (any one
 *    of them counts), or `expected_groups` as in the eval format for tasks that need several tools.
 * Prints recall@1/5/10, MRR@10, nDCG@10 and all@10 per subset and overall, the latency of
 * retrieve_tools, the index time, the cold start and the proxy's peak RSS. MCPPROXY_* variables
 * (MCPPROXY_EMBEDDER, MCPPROXY_HF_MODEL, …) and OPENAI_API_KEY are passed to the proxy.
 *
 *   npm run eval -- [FILE.json] [--top-k 10] [--limit N] [--json OUT.json]
 *   npm run eval -- --config mcp_config.json --queries queries.json [--top-k 10] [--json OUT.json]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { loadQueries } from "../src/eval/eval-queries.ts";
import { launchCatalog } from "./catalog-launcher.ts";
import { type EvalQuery, loadEvalCatalog, requireEvalSet, splitGroupOf, toolId } from "./eval-catalog.ts";
import { bootstrapMean, meanScores, percentile, type QueryScore, scoreQuery } from "./metrics.ts";
import { benchEnv, peakRssMiB, runBinary, startProxyStdio } from "./proxy-process.ts";

export interface EvalReport {
  file: string;
  tools: number;
  servers: number;
  queries: number;
  indexSeconds: number;
  latencyMs: { p50: number; p95: number };
  /** From spawning `serve` to the first retrieve_tools answer, with the index already on disk. */
  coldStartMs: number;
  peakRssMiB: number;
  /** Per subset (and, for an eval catalog, per half of the split by server): means and intervals. */
  subsets: Record<
    string,
    QueryScore & {
      queries: number;
      interval: Record<IntervalMetric, [number, number]>;
      /** Mean tools per answer, and tokens per answer (the characters of its JSON / 4). */
      schemas: number;
      tokens: number;
    }
  >;
}

const SPLIT_GROUPS = ["half A", "half B", "cross"];

/** The metrics reported with a 95% bootstrap interval. */
const INTERVAL_METRICS = ["recall1", "recall5", "mrr10"] as const;
type IntervalMetric = (typeof INTERVAL_METRICS)[number];

interface EvalOptions {
  topK?: number;
  limit?: number;
  env?: Record<string, string>;
}

export async function runRetrievalEval(file: string, options: EvalOptions = {}): Promise<EvalReport> {
  const catalog = loadEvalCatalog(file);
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-eval-"));
  const launched = await launchCatalog(resolve(file), catalog, work);
  try {
    return await evaluate(
      file,
      launched.configPath,
      catalog.queries,
      work,
      options,
      { tools: catalog.tools.length, servers: launched.servers },
      launched.catalogServer,
    );
  } finally {
    await launched.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** Your own servers (a config file) and your own queries. */
export async function runConfigEval(configPath: string, queriesFile: string, options: EvalOptions = {}) {
  const queries = loadQueries(queriesFile);
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-eval-"));
  try {
    return await evaluate(configPath, resolve(configPath), queries, work, options);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function evaluate(
  label: string,
  configPath: string,
  allQueries: readonly EvalQuery[],
  work: string,
  options: EvalOptions,
  counts?: { tools: number; servers: number },
  /** The catalog's name of a server in the config (see catalog-launcher.ts). */
  catalogServer: (configName: string) => string = (name) => name,
): Promise<EvalReport> {
  const topK = options.topK ?? 10;
  const queries = options.limit ? allQueries.slice(0, options.limit) : allQueries;
  const dataDir = join(work, "data");
  // retrieve_tools returns at most MCPPROXY_TOP_K tools, so the proxy is told the eval's top K.
  const env = benchEnv(join(work, "home"), { MCPPROXY_TOP_K: String(topK), ...options.env });

  const indexed = await runBinary(["index", "--config", configPath, "--data-dir", dataDir], env);
  if (indexed.code !== 0) throw new Error(`mcpproxy index failed:\n${indexed.stdout}\n${indexed.stderr}`);

  const spawned = performance.now();
  const proxy = await startProxyStdio(configPath, dataDir, env);
  await proxy.client.callTool({ name: "retrieve_tools", arguments: { query: "warm up" } });
  const coldStartMs = performance.now() - spawned;
  const latencies: number[] = [];
  const scores = new Map<string, (QueryScore & { schemas: number; tokens: number })[]>();
  let rss = Number.NaN;
  try {
    for (const query of queries) {
      const started = performance.now();
      const result = await proxy.client.callTool({
        name: "retrieve_tools",
        arguments: { query: query.query, top_k: topK },
      });
      latencies.push(performance.now() - started);
      const found = (result.structuredContent as { tools: { server: string; tool: string }[] }).tools;
      const score = {
        ...scoreQuery(
          found.map((hit) => toolId(catalogServer(hit.server), hit.tool)),
          query.expected_groups,
        ),
        schemas: found.length,
        tokens: JSON.stringify(result.structuredContent).length / 4,
      };
      // The halves of the split by server only mean something for a catalog of many servers.
      const groups = [query.subset ?? "all", "ALL", ...(counts ? [splitGroupOf(query.expected_groups)] : [])];
      for (const group of groups) scores.set(group, [...(scores.get(group) ?? []), score]);
    }
  } finally {
    rss = peakRssMiB(proxy.pid);
    await proxy.close();
  }
  const subsets: EvalReport["subsets"] = {};
  const order = (name: string) => (name === "ALL" ? 2 : SPLIT_GROUPS.includes(name) ? 3 : 1);
  for (const [subset, list] of [...scores.entries()].sort(
    ([a], [b]) => order(a) - order(b) || a.localeCompare(b),
  )) {
    if (subset === "all" && scores.size === 2) continue; // one subset only: ALL says it
    const interval = Object.fromEntries(
      INTERVAL_METRICS.map((metric) => {
        const { low, high } = bootstrapMean(list.map((score) => score[metric]));
        return [metric, [low, high]];
      }),
    ) as Record<IntervalMetric, [number, number]>;
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    subsets[subset] = {
      queries: list.length,
      ...meanScores(list),
      interval,
      schemas: mean(list.map((score) => score.schemas)),
      tokens: mean(list.map((score) => score.tokens)),
    };
  }
  const summary = /(\d+) of \d+ servers indexed/.exec(indexed.stdout);
  return {
    file: label,
    tools: counts?.tools ?? Number(/(\d+) tools/.exec(indexed.stdout)?.[1] ?? Number.NaN),
    servers: counts?.servers ?? Number(summary?.[1] ?? Number.NaN),
    queries: queries.length,
    indexSeconds: indexed.ms / 1000,
    latencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95) },
    coldStartMs,
    peakRssMiB: rss,
    subsets,
  };
}

export function formatEvalReport(report: EvalReport): string {
  const f = (n: number) => n.toFixed(3);
  const withInterval = (s: EvalReport["subsets"][string], metric: IntervalMetric) =>
    `${f(s[metric])} (${f(s.interval[metric][0])}–${f(s.interval[metric][1])})`;
  const rows = Object.entries(report.subsets).map(
    ([name, s]) =>
      `| ${name} | ${s.queries} | ${withInterval(s, "recall1")} | ${withInterval(s, "recall5")} | ${f(s.recall10)} | ${withInterval(s, "mrr10")} | ${f(s.ndcg10)} | ${f(s.all10)} | ${s.schemas.toFixed(2)} | ${s.tokens.toFixed(0)} |`,
  );
  const embedder = process.env.MCPPROXY_EMBEDDER ?? "BM25";
  return [
    `${report.file}: ${report.tools} tools on ${report.servers} servers, ${report.queries} queries, embedder ${embedder}`,
    "(in parentheses: 95% bootstrap interval; half A and half B: the split by server, cross: queries needing both;",
    " tokens: the characters of the answer's JSON / 4)",
    "",
    "| subset | queries | recall@1 | recall@5 | recall@10 | MRR@10 | nDCG@10 | all@10 | tools/answer | tokens/answer |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
    `index: ${report.indexSeconds.toFixed(2)} s; retrieve_tools over stdio: p50 ${report.latencyMs.p50.toFixed(2)} ms, ` +
      `p95 ${report.latencyMs.p95.toFixed(2)} ms; cold start to first answer ${report.coldStartMs.toFixed(0)} ms; ` +
      `serve peak RSS ${report.peakRssMiB.toFixed(0)} MiB`,
  ].join("\n");
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    options: {
      "top-k": { type: "string" },
      limit: { type: "string" },
      json: { type: "string" },
      config: { type: "string" },
      queries: { type: "string" },
    },
    allowPositionals: true,
  });
  const options: EvalOptions = {
    topK: values["top-k"] ? Number(values["top-k"]) : 10,
    ...(values.limit ? { limit: Number(values.limit) } : {}),
  };
  if (Boolean(values.config) !== Boolean(values.queries)) {
    process.stderr.write("--config and --queries go together: your servers and the queries to ask them\n");
    process.exit(2);
  }
  const report = values.config
    ? await runConfigEval(values.config, values.queries!, options)
    : await runRetrievalEval(requireEvalSet(positionals[0]), options);
  process.stdout.write(`${formatEvalReport(report)}\n`);
  if (values.json) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
}
