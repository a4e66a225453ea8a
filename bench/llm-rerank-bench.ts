#!/usr/bin/env bun
/**
 * What `llm` search mode adds to retrieve_tools on the proxy's side: the eval catalog's tools
 * (MCPPROXY_EVAL_SET) indexed once, then the same requests asked over stdio of a lexical `serve` and of
 * an llm `serve` whose chat model is the fixture on 127.0.0.1 (tests/fixtures/chat-completions-server.ts,
 * which answers at once), interleaved; then the llm serve again with every request repeated (the
 * cache). The fixture answers in well under a millisecond, so the difference is the proxy's own
 * cost (prompt, HTTP round trip, parsing the answer); a real model adds its own latency on top.
 * Also prints the prompt's size (the fixture's usage: characters / 4) per request, and the ceiling
 * of the mode: recall@N of the lexical search over every eval request, the share of needed tools
 * that are among the N candidates a model is shown (it can only reorder and drop them).
 *
 *   bun bench/llm-rerank-bench.ts [--queries N] [--candidates N] [--model-ms MS]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { startChatServer } from "../tests/fixtures/start-chat-server.ts";
import { launchCatalog } from "./catalog-launcher.ts";
import { loadEvalCatalog, requireEvalSet } from "./eval-catalog.ts";
import { percentile } from "./metrics.ts";
import { benchEnv, runBinary, startProxyStdio } from "./proxy-process.ts";

const { values } = parseArgs({
  options: {
    queries: { type: "string", default: "200" },
    candidates: { type: "string", default: "20" },
    "model-ms": { type: "string", default: "0" },
  },
});
const queryCount = Number(values.queries);
const file = requireEvalSet();
const catalog = loadEvalCatalog(file);
const queries = catalog.queries.slice(0, queryCount).map((q) => q.query);

const work = mkdtempSync(join(tmpdir(), "mcpproxy-llm-bench-"));
const launched = await launchCatalog(file, catalog, work);
const chat = await startChatServer({ FIXTURE_DELAY_MS: values["model-ms"]! });
try {
  const dataDir = join(work, "data");
  const configPath = join(work, "llm-config.json");
  const config = JSON.parse(readFileSync(launched.configPath, "utf8")) as Record<string, unknown>;
  writeFileSync(
    configPath,
    JSON.stringify({
      ...config,
      mcpproxy: {
        search: {
          llm: {
            baseUrl: chat.url,
            model: "fixture",
            candidates: Number(values.candidates),
            timeoutMs: 10_000,
          },
        },
      },
    }),
  );
  const env = benchEnv(join(work, "home"));
  const indexed = await runBinary(["index", "--config", configPath, "--data-dir", dataDir], env);
  if (indexed.code !== 0) throw new Error(`index failed:\n${indexed.stderr}`);

  // top_k is 5 in the timed calls; 50 lets the recall pass read deeper.
  const lexical = await startProxyStdio(configPath, dataDir, {
    ...env,
    MCPPROXY_SEARCH_MODE: "lexical",
    MCPPROXY_TOP_K: "50",
  });
  const llm = await startProxyStdio(configPath, dataDir, { ...env, MCPPROXY_SEARCH_MODE: "llm" });
  const timed = async (client: Client, query: string) => {
    const started = performance.now();
    const result = await client.callTool({ name: "retrieve_tools", arguments: { query, top_k: 5 } });
    if (result.isError) throw new Error(JSON.stringify(result.content));
    return performance.now() - started;
  };
  // Warm both (first search loads the index into memory).
  await timed(lexical.client, "warm up");
  await timed(llm.client, "warm up");
  const times = { lexical: [] as number[], llm: [] as number[], cached: [] as number[] };
  for (const query of queries) {
    times.lexical.push(await timed(lexical.client, query));
    times.llm.push(await timed(llm.client, query));
  }
  for (const query of queries) times.cached.push(await timed(llm.client, query));
  const requests = await chat.requests();
  const depths = [5, 10, 20, 30, 50];
  const recall = Object.fromEntries(depths.map((k) => [k, 0]));
  for (const query of catalog.queries) {
    const result = await lexical.client.callTool({
      name: "retrieve_tools",
      arguments: { query: query.query, top_k: 50 },
    });
    const hits = (result.structuredContent as { tools: { server: string; tool: string }[] }).tools;
    const ranked = hits.map((hit) => `${launched.catalogServer(hit.server)}/${hit.tool}`);
    for (const k of depths) {
      const found = query.expected_groups.filter((group) =>
        group.some((id) => ranked.slice(0, k).includes(id)),
      );
      recall[k]! += found.length / Math.max(1, query.expected_groups.length);
    }
  }
  await lexical.close();
  await llm.close();

  const tokens = requests.map((r) => r.usage?.prompt_tokens ?? 0).filter((n) => n > 0);
  const p = (list: number[], q: number) => percentile(list, q).toFixed(2);
  const report = {
    tools: catalog.tools.length,
    queries: queries.length,
    candidates: Number(values.candidates),
    modelMs: Number(values["model-ms"]),
    requestsSent: requests.length,
    ms: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, { p50: p(v, 50), p95: p(v, 95) }])),
    addedP50Ms: (percentile(times.llm, 50) - percentile(times.lexical, 50)).toFixed(2),
    promptTokens: { p50: percentile(tokens, 50), max: Math.max(...tokens) },
  };
  process.stdout.write(
    `${report.queries} requests over ${report.tools} tools, ${report.candidates} candidates, model answers in ${report.modelMs} ms:\n` +
      `  lexical        p50 ${report.ms.lexical!.p50} ms  p95 ${report.ms.lexical!.p95} ms\n` +
      `  llm            p50 ${report.ms.llm!.p50} ms  p95 ${report.ms.llm!.p95} ms  (+${report.addedP50Ms} ms at p50)\n` +
      `  llm, cached    p50 ${report.ms.cached!.p50} ms  p95 ${report.ms.cached!.p95} ms\n` +
      `  chat requests sent: ${report.requestsSent}; prompt ~${report.promptTokens.p50} tokens (p50), ${report.promptTokens.max} max\n` +
      `  recall of the lexical candidates over all ${catalog.queries.length} requests: ` +
      `${depths.map((k) => `@${k} ${(recall[k]! / catalog.queries.length).toFixed(3)}`).join("  ")}\n`,
  );
} finally {
  chat.stop();
  await launched.stop();
  rmSync(work, { recursive: true, force: true });
}
