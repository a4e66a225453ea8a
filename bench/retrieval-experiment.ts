#!/usr/bin/env bun
/**
 * A retrieval change judged as an experiment: every variant against the baseline, in process, on
 * the same queries, with a paired bootstrap 95% interval of the difference, overall, per subset
 * and on each half of a split by server (two disjoint halves of the servers, each with the
 * queries whose expected tools all live there). A change is worth keeping when it helps recall@1
 * or MRR beyond the interval on both halves and costs no subset beyond it.
 *
 *   bun bench/retrieval-experiment.ts [EVAL.json]
 */
import { readFileSync } from "node:fs";
import {
  askedOperation,
  OPERATION_CANDIDATES,
  rescoreByOperation,
} from "../src/index/operation-agreement.ts";
import { withoutLiterals } from "../src/index/query-text.ts";
import { interleaveSteps, requestSteps } from "../src/index/request-steps.ts";
import { type Analyzer, createSearchIndex, type SearchIndex } from "../src/index/search-index.ts";
import { toolFields, type UpstreamTool } from "../src/index/tool-document.ts";
import { splitGroupOf } from "./eval-catalog.ts";
import { bootstrapMean, meanScores, type QueryScore, scoreQuery } from "./metrics.ts";

interface EvalTool extends UpstreamTool {
  server: string;
}
export interface EvalQuery {
  id: string;
  query: string;
  expected_groups: string[][];
  subset: string;
}
const file =
  process.argv.slice(2).find((arg) => arg.endsWith(".json")) ?? "../shared/eval/etom-msc-bench.json";
export const data = JSON.parse(readFileSync(file, "utf8")) as { tools: EvalTool[]; queries: EvalQuery[] };

export interface Variant {
  name: string;
  analyzer?: Analyzer;
  description?: (text: string) => string;
  /** Re-scores the index's top candidates for a query (name precision, verb agreement, …). */
  rerank?: (query: string, hits: { id: string; score: number }[]) => { id: string; score: number }[];
  /** Replaces the single search: how the ranking of a request is put together from the index. */
  retrieve?: (index: SearchIndex, text: string) => Promise<{ id: string; score: number }[]>;
}

/** The text the binary searches for a request: its literals set aside, unless nothing else is left. */
export function searchTextOf(query: string): string {
  const stripped = withoutLiterals(query);
  return stripped.trim() ? stripped : query;
}

/** As the binary ranks one text: the index's best 30, re-scored by the operation the text names. */
export async function operationRanked(index: SearchIndex, text: string) {
  const hits = await index.search(text, OPERATION_CANDIDATES);
  const asked = askedOperation(text);
  return asked ? rescoreByOperation(asked, hits, (id) => id.slice(id.lastIndexOf("/") + 1)) : hits;
}

async function rank(variant: Variant): Promise<Map<string, string[]>> {
  const index = createSearchIndex(variant.analyzer);
  await index.add(
    data.tools.map((tool) => {
      const fields = toolFields(tool.server, tool);
      if (variant.description) fields.description = variant.description(fields.description);
      return { id: `${tool.server}/${tool.name}`, fields };
    }),
  );
  const out = new Map<string, string[]>();
  for (const q of data.queries) {
    const text = searchTextOf(q.query);
    let hits = variant.retrieve
      ? await variant.retrieve(index, text)
      : await index.search(text, variant.rerank ? 30 : 10);
    if (variant.rerank) hits = variant.rerank(text, hits).sort((a, b) => b.score - a.score);
    out.set(
      q.id,
      hits.slice(0, 10).map((hit) => hit.id),
    );
  }
  return out;
}

export const groupOf = (q: EvalQuery) => splitGroupOf(q.expected_groups);

const METRICS = ["recall1", "recall5", "mrr10", "all10"] as const;
const LABEL = { recall1: "r1", recall5: "r5", mrr10: "mrr", all10: "all10" } as const;

/** Mean difference (variant − base) and its paired bootstrap 95% interval. */
const delta = (base: QueryScore[], other: QueryScore[], metric: (typeof METRICS)[number]) =>
  bootstrapMean(base.map((b, i) => other[i]![metric] - b[metric]));

const print = (line: string) => process.stdout.write(`${line}\n`);

export async function runExperiment(variants: Variant[]) {
  const base = await rank(variants[0]!);
  const groups = new Map<string, EvalQuery[]>();
  const add = (key: string, q: EvalQuery) => groups.set(key, [...(groups.get(key) ?? []), q]);
  for (const q of data.queries) {
    add("ALL", q);
    add(q.subset, q);
    add(groupOf(q), q);
  }
  const scores = (ranking: Map<string, string[]>, qs: EvalQuery[]) =>
    qs.map((q) => scoreQuery(ranking.get(q.id)!, q.expected_groups));
  const f = (n: number) => (n >= 0 ? "+" : "") + n.toFixed(3);
  print(`baseline ${variants[0]!.name}:`);
  for (const [key, qs] of [...groups].sort()) {
    const m = meanScores(scores(base, qs));
    print(
      `  ${key.padEnd(9)} n=${String(qs.length).padEnd(5)} r1 ${m.recall1.toFixed(3)} r5 ${m.recall5.toFixed(3)} r10 ${m.recall10.toFixed(3)} mrr ${m.mrr10.toFixed(3)} ndcg ${m.ndcg10.toFixed(3)} all10 ${m.all10.toFixed(3)}`,
    );
  }
  for (const variant of variants.slice(1)) {
    const ranking = await rank(variant);
    print(`${variant.name} − baseline (mean [95% CI]):`);
    for (const [key, qs] of [...groups].sort()) {
      const b = scores(base, qs);
      const o = scores(ranking, qs);
      const cells = METRICS.map((metric) => {
        const d = delta(b, o, metric);
        const mark = d.low > 0 ? "▲" : d.high < 0 ? "▼" : " ";
        return `${LABEL[metric]} ${f(d.mean)} [${f(d.low)}, ${f(d.high)}]${mark}`;
      });
      print(`  ${key.padEnd(9)} ${cells.join("  ")}`);
    }
  }
}

if (import.meta.main) {
  // The last experiments, kept as templates for the next (README, "How a retrieval change is
  // judged", has their figures).
  const rankText = async (index: SearchIndex, text: string) =>
    (await operationRanked(index, text)).slice(0, 10);
  // As the binary ranks a request: the steps of a multi-step one interleaved after the whole's best.
  const current = async (index: SearchIndex, text: string) => {
    const whole = await rankText(index, text);
    const steps = requestSteps(text);
    if (steps.length === 0) return whole;
    return interleaveSteps(whole, await Promise.all(steps.map((step) => rankText(index, step))), 10);
  };
  /** Multi-step requests: the whole request's ranking, with each step's best tool kept in the top 10. */
  const stepBestInTen = async (index: SearchIndex, text: string) => {
    const whole = await rankText(index, text);
    const steps = requestSteps(text);
    const bests = (await Promise.all(steps.map((step) => rankText(index, step)))).flatMap((hits) =>
      hits.slice(0, 1),
    );
    const missing = bests.filter(
      (best, i) => !whole.some((hit) => hit.id === best.id) && bests.findIndex((b) => b.id === best.id) === i,
    );
    return [...whole.slice(0, Math.max(5, 10 - missing.length)), ...missing].slice(0, 10);
  };
  await runExperiment([
    { name: "current (BM25F, operation agreement, steps interleaved)", retrieve: current },
    { name: "without the steps", retrieve: rankText },
    { name: "each step's best kept in the top 10 instead", retrieve: stepBestInTen },
  ]);
}
