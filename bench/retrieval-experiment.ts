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
import { relevanceFloor } from "../src/index/relevance-floor.ts";
import { mergeSteps, type Ranking, requestSteps, STEP_CANDIDATES } from "../src/index/request-steps.ts";
import {
  type Analyzer,
  createSearchIndex,
  type SearchHit,
  type SearchIndex,
} from "../src/index/search-index.ts";
import { type ToolFields, toolFields } from "../src/index/tool-document.ts";
import type { UpstreamTool } from "../src/upstream-tool.ts";
import { seededRandom } from "../tests/helpers.ts";
import { requireEvalSet, splitGroupOf } from "./eval-catalog.ts";
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
const file = requireEvalSet(process.argv.slice(2).find((arg) => arg.endsWith(".json")));
export const data = JSON.parse(readFileSync(file, "utf8")) as { tools: EvalTool[]; queries: EvalQuery[] };

/**
 * Long multi-step tasks built from the eval's own paraphrased single-tool requests (etom-L2):
 * LONG_TASKS per half of the server split, each 4 to 8 requests of that half run together as one
 * task, one expected group per request, written two ways: as sentences ("long") and as one
 * run-on sentence joined by "and" ("run-on", which names no step the splitter can cut at). The
 * eval's multi-step requests are short (L4: a median of 46 content words) and their best tools
 * score far above any floor, so they cannot show what a floor or a merge does to the 100-word
 * tasks agents write. Reported apart (with their halves), never in ALL. Seeded, so every run
 * and variant sees the same tasks.
 */
const LONG_TASKS = 100;
export function longTasks(queries: readonly EvalQuery[]): EvalQuery[] {
  const random = seededRandom(23);
  const tasks: EvalQuery[] = [];
  for (const half of ["half A", "half B"] as const) {
    const pool = queries.filter((q) => q.subset === "etom-L2" && groupOf(q) === half);
    if (pool.length < 8) continue; // another eval file (the quick start's) has no such requests
    for (let i = 0; i < LONG_TASKS; i++) {
      const parts: EvalQuery[] = [];
      const size = 4 + (i % 5);
      while (parts.length < size) {
        const pick = pool[Math.floor(random() * pool.length)]!;
        if (!parts.includes(pick)) parts.push(pick);
      }
      const expected_groups = parts.flatMap((q) => q.expected_groups);
      const sentences = parts.map((q) => q.query.trim().replace(/(?<![.!?])$/, "."));
      const id = `${half.at(-1)}-${i}`;
      tasks.push({ id: `long-${id}`, query: sentences.join(" "), expected_groups, subset: "long" });
      const clauses = sentences.map((text) => text.replace(/[.!?]+$/, "").replace(/[.!?;]+\s+/g, ", "));
      tasks.push({
        id: `run-on-${id}`,
        query: `${clauses.join(", and ")}.`,
        expected_groups,
        subset: "run-on",
      });
    }
  }
  return tasks;
}

export interface Variant {
  name: string;
  analyzer?: Analyzer;
  description?: (text: string) => string;
  /** Rewrites a tool's indexed fields (after `description`): text added at index time, by tool. */
  fields?: (fields: ToolFields, tool: EvalTool) => ToolFields;
  /** Re-scores the index's top candidates for a query (name precision, verb agreement, …). */
  rerank?: (query: string, hits: { id: string; score: number }[]) => { id: string; score: number }[];
  /** Replaces the single search: how the ranking of a request is put together from the index. */
  retrieve?: (index: SearchIndex, text: string) => Promise<{ id: string; score: number }[]>;
}

/** The text the binary searches for a request: its literals set aside, unless nothing else is left. */
/** How one text is ranked by a variant: its hits, and the floor they are judged against. */
export type RankText = (index: SearchIndex, text: string, wanted: number) => Promise<Ranking<SearchHit>>;

/** As the binary puts a request together from `rankText`: the whole request and its steps, merged by score. */
export const requestRanking = (rankText: RankText) => async (search: SearchIndex, text: string) => {
  const steps = requestSteps(text);
  const whole = await rankText(search, text, steps.length > 0 ? STEP_CANDIDATES : 10);
  if (steps.length === 0) return whole.hits.filter((hit) => hit.score >= whole.floor).slice(0, 10);
  const rankings = await Promise.all(steps.map((step) => rankText(search, step, STEP_CANDIDATES)));
  return mergeSteps(whole, rankings, 10);
};

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
      return {
        id: `${tool.server}/${tool.name}`,
        fields: variant.fields ? variant.fields(fields, tool) : fields,
      };
    }),
  );
  const out = new Map<string, string[]>();
  for (const q of [...data.queries, ...LONG]) {
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
const LONG = longTasks(data.queries);

const METRICS = ["recall1", "recall5", "mrr10", "all10"] as const;
const LABEL = { recall1: "r1", recall5: "r5", mrr10: "mrr", all10: "all10" } as const;

/** Mean difference (variant − base) and its paired bootstrap 95% interval. */
const delta = (base: QueryScore[], other: QueryScore[], metric: (typeof METRICS)[number]) =>
  bootstrapMean(base.map((b, i) => other[i]![metric] - b[metric]));

const print = (line: string) => process.stdout.write(`${line}\n`);

/** `groupsOf` adds groups of the eval's queries of one's own (a subset, each with its halves). */
export async function runExperiment(variants: Variant[], groupsOf?: (q: EvalQuery) => string[]) {
  const base = await rank(variants[0]!);
  const groups = new Map<string, EvalQuery[]>();
  const add = (key: string, q: EvalQuery) => groups.set(key, [...(groups.get(key) ?? []), q]);
  for (const q of data.queries) {
    add("ALL", q);
    add(q.subset, q);
    add(groupOf(q), q);
    // The multi-step levels on each half: a change to how steps are merged must hold on both.
    if (q.subset === "etom-L3" || q.subset === "etom-L4") add(`multi ${groupOf(q)}`, q);
    for (const group of groupsOf?.(q) ?? []) {
      add(group, q);
      add(`${group} ${groupOf(q)}`, q);
    }
  }
  for (const q of LONG) {
    add(q.subset, q);
    add(`${q.subset} ${groupOf(q)}`, q);
  }
  const scores = (ranking: Map<string, string[]>, qs: EvalQuery[]) =>
    qs.map((q) => scoreQuery(ranking.get(q.id)!, q.expected_groups));
  const f = (n: number) => (n >= 0 ? "+" : "") + n.toFixed(3);
  print(`baseline ${variants[0]!.name}:`);
  for (const [key, qs] of [...groups].sort()) {
    const m = meanScores(scores(base, qs));
    print(
      `  ${key.padEnd(16)} n=${String(qs.length).padEnd(5)} r1 ${m.recall1.toFixed(3)} r5 ${m.recall5.toFixed(3)} r10 ${m.recall10.toFixed(3)} mrr ${m.mrr10.toFixed(3)} ndcg ${m.ndcg10.toFixed(3)} all10 ${m.all10.toFixed(3)}`,
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
      print(`  ${key.padEnd(16)} ${cells.join("  ")}`);
    }
  }
}

/**
 * How the binary merged steps before issue 23, kept as the baseline: the whole request's best two,
 * then each step's hits in turn, rank by rank, with the whole request's next after each round.
 */
export function interleaveSteps<T extends { id: string; score: number }>(
  whole: readonly T[],
  steps: readonly (readonly T[])[],
  limit: number,
): T[] {
  const merged: T[] = [];
  const seen = new Set<string>();
  const take = (hit: T | undefined) => {
    if (!hit || merged.length >= limit || seen.has(hit.id)) return;
    seen.add(hit.id);
    merged.push(hit);
  };
  for (const hit of whole.slice(0, 2)) take(hit);
  const depth = Math.max(whole.length, ...steps.map((step) => step.length));
  for (let rank = 0; rank < depth && merged.length < limit; rank++) {
    for (const step of steps) take(step[rank]);
    take(whole[2 + rank]);
  }
  return merged;
}

if (import.meta.main) {
  // The last experiments, kept as templates for the next (docs/research/retrieval-lab-notes.md, "How a retrieval change is
  // judged", has their figures). Each ranks as the binary does with the default minimum score.
  const MIN_SCORE = 0.05;
  const rankText = async (index: SearchIndex, text: string, depth = 10) =>
    (await operationRanked(index, text)).slice(0, depth);
  const fixedFloor = () => MIN_SCORE;
  const scaledFloor = (text: string) => relevanceFloor(text, MIN_SCORE);
  const above = (floor: number) => (hit: { score: number }) => hit.score >= floor;
  /** Before issue 23: every ranking cut at its floor, then the steps interleaved after the whole's best two. */
  const interleaved = (floorOf: (text: string) => number) => async (index: SearchIndex, text: string) => {
    const whole = (await rankText(index, text)).filter(above(floorOf(text)));
    const steps = requestSteps(text);
    if (steps.length === 0) return whole;
    const stepHits = await Promise.all(
      steps.map(async (step) => (await rankText(index, step)).filter(above(floorOf(step)))),
    );
    return interleaveSteps(whole, stepHits, 10);
  };
  /** Interleaved, with a whole-request hit kept when it reaches its own floor or a step's. */
  const interleavedPerRanking =
    (floorOf: (text: string) => number) => async (index: SearchIndex, text: string) => {
      const steps = requestSteps(text);
      const whole = await rankText(index, text);
      if (steps.length === 0) return whole.filter(above(floorOf(text)));
      const stepHits = await Promise.all(
        steps.map(async (step) => (await rankText(index, step)).filter(above(floorOf(step)))),
      );
      const onStep = new Set(stepHits.flat().map((hit) => hit.id));
      return interleaveSteps(
        whole.filter((hit) => hit.score >= floorOf(text) || onStep.has(hit.id)),
        stepHits,
        10,
      );
    };
  /** As the binary ranks now: the steps merged by score over each ranking's best 30, the floor judged per ranking. */
  const merged =
    (floorOf: (text: string) => number, stepBestPlaces?: number) =>
    async (index: SearchIndex, text: string) => {
      const steps = requestSteps(text);
      const whole = await rankText(index, text, STEP_CANDIDATES);
      if (steps.length === 0) return whole.filter(above(floorOf(text))).slice(0, 10);
      const rankings = await Promise.all(
        steps.map(async (step) => ({
          hits: await rankText(index, step, STEP_CANDIDATES),
          floor: floorOf(step),
        })),
      );
      return mergeSteps({ hits: whole, floor: floorOf(text) }, rankings, 10, stepBestPlaces);
    };
  await runExperiment([
    { name: "before (fixed floor 0.05, steps interleaved)", retrieve: interleaved(fixedFloor) },
    { name: "floor scaled by length", retrieve: interleaved(scaledFloor) },
    { name: "floor judged per ranking (whole or a step)", retrieve: interleavedPerRanking(fixedFloor) },
    { name: "floor scaled and judged per ranking", retrieve: interleavedPerRanking(scaledFloor) },
    { name: "steps merged by score alone, fixed floor judged per ranking", retrieve: merged(fixedFloor, 0) },
    {
      name: "merged by score, each step's best in the top 10, fixed floor per ranking",
      retrieve: merged(fixedFloor),
    },
    {
      name: "both (now): merged, step bests in the top 10, floor scaled and per ranking",
      retrieve: merged(scaledFloor),
    },
  ]);
}
