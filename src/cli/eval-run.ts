import { openCatalog } from "../app/open-catalog.ts";
import { startPlugins } from "../app/start-plugins.ts";
import type { ResolvedConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors.ts";
import { type EvalQuery, loadQueries } from "../eval/eval-queries.ts";
import { meanScores, type QueryScore, scoreQuery } from "../eval/retrieval-metrics.ts";
import { rerankerFor } from "../index/llm-rerank.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import { retrieveRanked } from "../server/tools/ranked-retrieve.ts";
import { emptyRerankTally, type RerankFigures, recordRerank, rerankFigures } from "../stats/rerank-stats.ts";
import type { CommandValues } from "./command.ts";
import { commandLogger, loadCommandConfig } from "./command-config.ts";

/** How deep each query is ranked: recall@10 and MRR@10 need ten. */
const DEPTH = 10;

/** `mcpproxy eval`: what it does once its flags are parsed (its flags and help: eval-command.ts). */
export async function runEvalCommand(values: CommandValues, positionals: string[]): Promise<number> {
  if (positionals.length !== 1) {
    throw new ProxyError("USAGE", "eval takes one QUERIES file, e.g. `mcpproxy eval queries.txt`.");
  }
  const queries = loadQueries(positionals[0]!);
  const config = loadCommandConfig(
    values,
    typeof values.mode === "string" ? { searchMode: { value: values.mode, flag: "--mode" } } : {},
  );
  const settings: Setting[] = [{ label: "as configured", config }];
  if (values.compare) {
    if (config.search.mode === "llm")
      settings.push({
        label: "without the LLM",
        config: { ...config, search: { mode: baseMode(config) } },
      });
    settings.push({ label: "no min score", config: { ...config, minScore: 0 } });
    if (config.embedder !== "bm25") {
      // Without the embedder, not at weight 0: the fused ranking still adds the vector side's candidates.
      const search = config.search.mode === "llm" ? config.search : { mode: "lexical" as const };
      settings.push({ label: "BM25 only", config: { ...config, embedder: "bm25", search } });
      if (config.vectorWeight !== 0.5)
        settings.push({ label: "vectorWeight 0.5", config: { ...config, vectorWeight: 0.5 } });
    }
  }
  const runs: Run[] = [];
  for (const setting of settings) runs.push(await evaluate(setting, queries));
  const [main] = runs;
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ runs: runs.map(runJson) }, null, 2)}\n`);
    return 0;
  }
  process.stdout.write(report(main!, runs));
  return 0;
}

interface Setting {
  label: string;
  config: ResolvedConfig;
}

interface QueryOutcome {
  query: EvalQuery;
  /** The ranking, as `server/tool` with scores. */
  ranked: { id: string; score: number }[];
  score: QueryScore;
}

interface Run {
  setting: Setting;
  indexed: number;
  outcomes: QueryOutcome[];
  mean: QueryScore;
  /** Expected tools the index does not hold. */
  unknown: string[];
  /** What the chat model did, in llm mode. */
  llm?: RerankFigures | undefined;
}

/** The search an llm mode re-ranks: the embedder's. */
const baseMode = (config: ResolvedConfig) => (config.embedder === "bm25" ? "lexical" : "hybrid");

async function evaluate(setting: Setting, queries: readonly EvalQuery[]): Promise<Run> {
  const { config } = setting;
  const logger = commandLogger(config);
  const catalog = await openCatalog(config, logger, { readOnly: true, waitForVectors: true });
  const plugins = await startPlugins(config, logger);
  const llm = emptyRerankTally();
  const rerank = rerankerFor(config.search, logger, (record) => recordRerank(llm, record, Date.now()));
  try {
    if (catalog.size() === 0) {
      throw new ProxyError("USAGE", "The index is empty: run `mcpproxy index` first.");
    }
    const outcomes: QueryOutcome[] = [];
    const unknown = new Set<string>();
    for (const query of queries) {
      const groups = query.expected_groups.map((group) =>
        group.map((id) => canonicalId(catalog, id, unknown)),
      );
      const result = await retrieveRanked(catalog, plugins, query.query, DEPTH, config.minScore, { rerank });
      const ranked = result.tools.map((hit) => ({
        id: `${hit.server}/${catalog.get(hit.name)?.tool ?? hit.name}`,
        score: hit.score,
      }));
      outcomes.push({
        query: { ...query, expected_groups: groups },
        ranked,
        score: scoreQuery(
          ranked.map((r) => r.id),
          groups,
        ),
      });
    }
    return {
      setting,
      indexed: catalog.size(),
      outcomes,
      mean: meanScores(outcomes.map((o) => o.score)),
      unknown: [...unknown],
      llm: rerank ? rerankFigures(config.search.llm?.model ?? "", llm) : undefined,
    };
  } finally {
    await plugins.dispose();
    await catalog.close();
  }
}

/** `server/tool` for an expected tool given either way; one the index lacks is noted. */
function canonicalId(catalog: ToolCatalog, id: string, unknown: Set<string>): string {
  const slash = id.indexOf("/");
  if (slash > 0) {
    const server = id.slice(0, slash);
    const tool = id.slice(slash + 1);
    if (!catalog.names(server).some((name) => catalog.get(name)?.tool === tool)) unknown.add(id);
    return id;
  }
  const known = catalog.get(id);
  if (known) return `${known.server}/${known.tool}`;
  unknown.add(id);
  return id;
}

const f3 = (n: number) => n.toFixed(3);

function report(main: Run, runs: readonly Run[]): string {
  const { config } = main.setting;
  const lines = [
    `${main.outcomes.length} queries on ${main.indexed} indexed tools (${searchOf(config)}, min score ${config.minScore}):`,
    `  recall@1 ${f3(main.mean.recall1)}  recall@5 ${f3(main.mean.recall5)}  recall@10 ${f3(main.mean.recall10)}  MRR@10 ${f3(main.mean.mrr10)}`,
  ];
  if (main.llm) lines.push(`  ${llmLine(main.llm)}`);
  const misses = main.outcomes.filter((o) => o.score.recall1 < 1);
  if (misses.length > 0) {
    lines.push("", `Not first (${misses.length}):`);
    for (const miss of misses) {
      lines.push(`  "${miss.query.query}"`);
      for (const group of miss.query.expected_groups) {
        const rank = miss.ranked.findIndex((r) => group.includes(r.id));
        const above = miss.ranked.slice(0, rank < 0 ? 3 : Math.min(rank, 3));
        const where = rank < 0 ? `not in the top ${DEPTH}` : `rank ${rank + 1}`;
        const wanted = group.length === 1 ? group[0] : `one of ${group.join(", ")}`;
        lines.push(
          `    expected ${wanted}: ${where}` +
            (above.length > 0
              ? `; above it: ${above.map((r) => `${r.id} (${r.score.toFixed(2)})`).join(", ")}`
              : ""),
        );
      }
    }
  }
  if (main.unknown.length > 0) {
    lines.push(
      "",
      `Expected tools that are not in the index (misspelt, or their server not indexed): ${main.unknown.join(", ")}`,
    );
  }
  if (runs.length > 1) {
    lines.push("", "Compared:", "  setting              recall@1  recall@5  recall@10  MRR@10");
    for (const run of runs) {
      const m = run.mean;
      lines.push(
        `  ${run.setting.label.padEnd(20)} ${f3(m.recall1).padEnd(9)} ${f3(m.recall5).padEnd(9)} ${f3(m.recall10).padEnd(10)} ${f3(m.mrr10)}`,
      );
    }
    if (main.setting.config.embedder === "bm25") {
      lines.push("  (set MCPPROXY_EMBEDDER and index again to compare an embedder)");
    }
  }
  return `${lines.join("\n")}\n`;
}

/** The search mode as the report names it: `lexical: BM25`, `llm: MODEL over the best 20 of …`. */
function searchOf(config: ResolvedConfig): string {
  const embedder = config.embedder.toUpperCase();
  const { mode, llm } = config.search;
  const base =
    config.embedder === "bm25"
      ? "BM25"
      : mode === "auto"
        ? `BM25, fused with ${embedder} (vectorWeight ${config.vectorWeight}) for weak requests`
        : `${embedder}, vectorWeight ${config.vectorWeight}`;
  if (mode === "llm" && llm) return `llm: ${llm.model} re-ranks the best ${llm.candidates} of ${base}`;
  return `${mode}: ${base}`;
}

function llmLine(llm: RerankFigures): string {
  return (
    `chat model: ${llm.requests} requests, mean ${llm.meanMs} ms (p95 ${llm.p95Ms} ms), ` +
    `${llm.meanPromptTokens} + ${llm.meanCompletionTokens} tokens each; ${llm.cacheHits} from the cache, ` +
    `${llm.fallbacks} kept the search's order${llm.lastFallback ? ` (last: ${llm.lastFallback})` : ""}`
  );
}

function runJson(run: Run) {
  const { config } = run.setting;
  return {
    setting: run.setting.label,
    mode: config.search.mode,
    ...(config.search.llm ? { llmModel: config.search.llm.model } : {}),
    ...(run.llm ? { llm: run.llm } : {}),
    embedder: config.embedder,
    vectorWeight: config.vectorWeight,
    minScore: config.minScore,
    indexedTools: run.indexed,
    metrics: run.mean,
    notIndexed: run.unknown,
    queries: run.outcomes.map((o) => ({
      id: o.query.id,
      query: o.query.query,
      expected: o.query.expected_groups,
      ranked: o.ranked,
      ...o.score,
    })),
  };
}
