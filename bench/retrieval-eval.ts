#!/usr/bin/env bun
/**
 * Retrieval eval through the real proxy: serves a catalog file (the ../shared/eval format) as real
 * MCP servers over HTTP, indexes it with the compiled `mcpproxy index`, asks every query through
 * `retrieve_tools` over MCP stdio, and prints recall@1/5/10, MRR@10, nDCG@10 and all@10 per subset
 * and overall, with the latency of retrieve_tools, the index time and the proxy's peak RSS.
 *
 *   npm run eval -- FILE.json [--top-k 10] [--limit N] [--json OUT.json]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type EvalCatalog, loadEvalCatalog, serverPath, toolId } from "./eval-catalog.ts";
import { meanScores, percentile, type QueryScore, scoreQuery } from "./metrics.ts";
import { benchEnv, peakRssMiB, ROOT, runBinary, startProxyStdio } from "./proxy-process.ts";

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
  subsets: Record<string, QueryScore & { queries: number }>;
}

export async function runRetrievalEval(
  file: string,
  options: { topK?: number; limit?: number; env?: Record<string, string> } = {},
): Promise<EvalReport> {
  const catalog: EvalCatalog = loadEvalCatalog(file);
  const topK = options.topK ?? 10;
  const queries = options.limit ? catalog.queries.slice(0, options.limit) : catalog.queries;
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-eval-"));
  const server = Bun.spawn([process.execPath, join(ROOT, "bench", "catalog-server.ts"), resolve(file)], {
    stdout: "pipe",
    stderr: "inherit",
  });
  try {
    const reader = server.stdout.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    reader.releaseLock();
    const { port, servers } = JSON.parse(first.split("\n")[0]!) as { port: number; servers: number };
    const mcpServers: Record<string, unknown> = {};
    for (const tool of catalog.tools) {
      mcpServers[tool.server] ??= { url: `http://127.0.0.1:${port}${serverPath(tool.server)}` };
    }
    const configPath = join(work, "mcp_config.json");
    writeFileSync(configPath, JSON.stringify({ mcpServers }));
    const dataDir = join(work, "data");
    const env = benchEnv(join(work, "home"), options.env);

    const indexed = await runBinary(["index", "--config", configPath, "--data-dir", dataDir], env);
    if (indexed.code !== 0) throw new Error(`mcpproxy index failed:\n${indexed.stdout}\n${indexed.stderr}`);

    const spawned = performance.now();
    const proxy = await startProxyStdio(configPath, dataDir, env);
    await proxy.client.callTool({ name: "retrieve_tools", arguments: { query: "warm up" } });
    const coldStartMs = performance.now() - spawned;
    const latencies: number[] = [];
    const scores = new Map<string, QueryScore[]>();
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
        const score = scoreQuery(
          found.map((hit) => toolId(hit.server, hit.tool)),
          query.expected_groups,
        );
        for (const subset of [query.subset ?? "all", "ALL"])
          scores.set(subset, [...(scores.get(subset) ?? []), score]);
      }
    } finally {
      rss = peakRssMiB(proxy.pid);
      await proxy.close();
    }
    const subsets: EvalReport["subsets"] = {};
    for (const [subset, list] of [...scores.entries()].sort(([a], [b]) =>
      a === "ALL" ? 1 : b === "ALL" ? -1 : a.localeCompare(b),
    )) {
      subsets[subset] = { queries: list.length, ...meanScores(list) };
    }
    return {
      file,
      tools: catalog.tools.length,
      servers,
      queries: queries.length,
      indexSeconds: indexed.ms / 1000,
      latencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95) },
      coldStartMs,
      peakRssMiB: rss,
      subsets,
    };
  } finally {
    server.kill();
    rmSync(work, { recursive: true, force: true });
  }
}

export function formatEvalReport(report: EvalReport): string {
  const f = (n: number) => n.toFixed(3);
  const rows = Object.entries(report.subsets).map(
    ([name, s]) =>
      `| ${name} | ${s.queries} | ${f(s.recall1)} | ${f(s.recall5)} | ${f(s.recall10)} | ${f(s.mrr10)} | ${f(s.ndcg10)} | ${f(s.all10)} |`,
  );
  return [
    `${report.file}: ${report.tools} tools on ${report.servers} servers, ${report.queries} queries`,
    "",
    "| subset | queries | recall@1 | recall@5 | recall@10 | MRR@10 | nDCG@10 | all@10 |",
    "|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
    `index: ${report.indexSeconds.toFixed(2)} s; retrieve_tools over stdio: p50 ${report.latencyMs.p50.toFixed(2)} ms, ` +
      `p95 ${report.latencyMs.p95.toFixed(2)} ms; cold start to first answer ${report.coldStartMs.toFixed(0)} ms; ` +
      `serve peak RSS ${report.peakRssMiB.toFixed(0)} MiB`,
  ].join("\n");
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    options: { "top-k": { type: "string" }, limit: { type: "string" }, json: { type: "string" } },
    allowPositionals: true,
  });
  const file = positionals[0] ?? join(ROOT, "..", "shared", "eval", "etom-msc-bench.json");
  const report = await runRetrievalEval(file, {
    topK: values["top-k"] ? Number(values["top-k"]) : 10,
    ...(values.limit ? { limit: Number(values.limit) } : {}),
  });
  process.stdout.write(`${formatEvalReport(report)}\n`);
  if (values.json) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
}
