#!/usr/bin/env bun
/**
 * Issue 23, items 3 and 4, judged as an experiment (bench/retrieval-experiment.ts): stem evidence counted
 * once (a five-term re-rank of the best 50 exact-form matches in place of the paired index and the
 * operation re-score) and sibling tools decided on the words their names do not share. Every
 * variant ranks as the binary does (literals set aside, steps merged by score, the floor scaled by
 * length and judged per ranking, minimum score 0.05). Besides the eval's subsets it reports the
 * one-vendor requests: single-tool requests whose tools live on one server of 8 or more tools
 * ("vendor"; the eval has no larger server), and those whose tool has a sibling ("sibling").
 * Neither the re-rank nor the sibling rule held (docs/research/retrieval-lab-notes.md has the figures); only "show" and "view"
 * no longer voting for get is in the binary. `--only siblings` tries the sibling rule at several
 * depths and costs, `--only words` the operation words that were dropped.
 * `--fit` fits the re-rank's weights by pairwise logistic regression on each half of the server
 * split and judges each fit on the other half.
 *
 *   bun bench/experiments/stem-sibling-experiment.ts [--fit]
 */
import { parseArgs } from "node:util";
import {
  askedOperation,
  OPERATION_CANDIDATES,
  OPERATION_WORDS,
  type OperationVocabulary,
  rescoreByOperation,
} from "../../src/index/operation-agreement.ts";
import { relevanceFloor } from "../../src/index/relevance-floor.ts";
import { mergeSteps, requestSteps, STEP_CANDIDATES } from "../../src/index/request-steps.ts";
import type { SearchIndex } from "../../src/index/search-index.ts";
import {
  data,
  type EvalQuery,
  groupOf,
  runExperiment,
  searchTextOf,
  type Variant,
} from "../retrieval-experiment.ts";
import {
  namePrecision,
  operationAgreement,
  RERANK_CANDIDATES,
  RERANK_WEIGHTS,
  type RerankWeights,
  requestEvidence,
  rerankByForm,
} from "./form-rerank.ts";
import { areSiblings, decideSiblings } from "./sibling-tools.ts";

const MIN_SCORE = 0.05;
type Hit = { id: string; score: number };

/** The operation words before issue 23: "show" and "view" voted for get. */
const VOTING_SHOW: OperationVocabulary = {
  list: "list lists listing enumerate",
  get: "get fetch retrieve show read details describe view",
  create: "create add new make insert register",
  update: "update modify change edit set rename patch",
  delete: "delete remove drop destroy erase",
  search: "search find query lookup look",
  send: "send post publish notify email message",
};

const toolOfId = new Map(
  data.tools.map((tool) => [`${tool.server}/${tool.name}`, { server: tool.server, tool: tool.name }]),
);
const toolOf = (id: string) => toolOfId.get(id);
const toolName = (id: string) => toolOfId.get(id)?.tool;

/** As the binary ranks a request, with `rankText` ranking one text (the whole request or a step). */
const asBinary =
  (rankText: (index: SearchIndex, text: string, depth: number) => Promise<Hit[]>) =>
  async (index: SearchIndex, text: string) => {
    const steps = requestSteps(text);
    const whole = await rankText(index, text, STEP_CANDIDATES);
    const floor = relevanceFloor(text, MIN_SCORE);
    if (steps.length === 0) return whole.filter((hit) => hit.score >= floor).slice(0, 10);
    const rankings = await Promise.all(
      steps.map(async (step) => ({
        hits: await rankText(index, step, STEP_CANDIDATES),
        floor: relevanceFloor(step, MIN_SCORE),
      })),
    );
    return mergeSteps({ hits: whole, floor }, rankings, 10);
  };

/** Today: the paired index, the best 30 re-scored by the operation the text names. */
const paired =
  (vocabulary: OperationVocabulary, siblings?: { depth: number; cost: number }) =>
  async (index: SearchIndex, text: string, depth: number) => {
    let hits = await index.search(text, Math.max(depth, OPERATION_CANDIDATES));
    const asked = askedOperation(text, vocabulary);
    if (asked) hits = rescoreByOperation(asked, hits, toolName, vocabulary);
    if (siblings)
      hits = decideSiblings(hits, requestEvidence(text, vocabulary), toolOf, siblings.depth, siblings.cost);
    return hits.slice(0, depth);
  };

/** Stem evidence once: the best 50 exact-form matches re-ranked by the five terms. */
const byForm =
  (weights: RerankWeights | ((text: string) => RerankWeights), siblings = false) =>
  async (index: SearchIndex, text: string, depth: number) => {
    const w = typeof weights === "function" ? weights(text) : weights;
    let hits = rerankByForm(text, index.searchByForm(text, Math.max(depth, RERANK_CANDIDATES)), toolName, w);
    if (siblings) hits = decideSiblings(hits, requestEvidence(text), toolOf);
    return hits.slice(0, depth);
  };

const serverSize = new Map<string, number>();
for (const tool of data.tools) serverSize.set(tool.server, (serverSize.get(tool.server) ?? 0) + 1);
const serverOf = (id: string) => toolOfId.get(id)!.server;
/** One-vendor requests: one tool needed, on one server of 8 or more tools; "sibling" when that tool has a sibling there. */
function vendorGroups(q: EvalQuery): string[] {
  if (q.expected_groups.length !== 1) return [];
  const group = q.expected_groups[0]!;
  const servers = new Set(group.map(serverOf));
  if (servers.size !== 1) return [];
  const server = [...servers][0]!;
  const names = data.tools.filter((tool) => tool.server === server).map((tool) => tool.name);
  const hasSibling = group.some((id) =>
    names.some((other) => other !== toolName(id) && areSiblings(toolName(id)!, other)),
  );
  return [...(serverSize.get(server)! >= 8 ? ["vendor"] : []), ...(hasSibling ? ["sibling"] : [])];
}

const FEATURES = ["exact", "stem", "name", "operation", "coverage"] as const;

/** Pairwise logistic regression over the five terms (as the learned ranker did; see bench/experiments/README.md), on the queries of one half. */
async function fitWeights(index: SearchIndex, half: string): Promise<RerankWeights> {
  const pairs: number[][] = [];
  for (const q of data.queries.filter((query) => groupOf(query) === half && query.subset !== "etom-L4")) {
    const text = searchTextOf(q.query);
    const evidence = requestEvidence(text);
    const relevant = new Set(q.expected_groups.flat());
    const rows = index.searchByForm(text, RERANK_CANDIDATES).map((hit) => {
      const name = toolName(hit.id) ?? "";
      return {
        id: hit.id,
        x: [
          hit.exact,
          hit.stem,
          namePrecision(evidence, name),
          operationAgreement(evidence, name),
          hit.coverage,
        ],
      };
    });
    const good = rows.filter((row) => relevant.has(row.id));
    for (const g of good)
      for (const b of rows) if (!relevant.has(b.id)) pairs.push(g.x.map((v, i) => v - b.x[i]!));
  }
  const w = [1, 0, 0, 0, 0];
  for (let epoch = 0; epoch < 400; epoch++) {
    const gradient = w.map((v) => 1e-3 * v);
    for (const d of pairs) {
      const p = 1 / (1 + Math.exp(d.reduce((sum, v, i) => sum + v * w[i]!, 0)));
      for (let i = 0; i < d.length; i++) gradient[i] = gradient[i]! - (p * d[i]!) / pairs.length;
    }
    for (let i = 0; i < w.length; i++) w[i] = w[i]! - 1 * gradient[i]!;
  }
  // Scaled so the exact term weighs 1, as in RERANK_WEIGHTS.
  const scale = w[0]! || 1;
  const fitted = Object.fromEntries(
    FEATURES.map((f, i) => [f, Math.max(0, w[i]! / scale)]),
  ) as unknown as RerankWeights;
  if (w[3]! < 0) fitted.operation = 0;
  process.stdout.write(
    `weights fit on ${half}: ${JSON.stringify(fitted, (_k, v) => (typeof v === "number" ? Number(v.toFixed(3)) : v))}\n`,
  );
  return fitted;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { fit: { type: "boolean" }, only: { type: "string" } } });
  const variants: Variant[] = [
    {
      name: "before (paired index, operation re-score with show voting)",
      retrieve: asBinary(paired(VOTING_SHOW)),
    },
  ];
  if (values.fit) {
    const { createSearchIndex } = await import("../../src/index/search-index.ts");
    const { toolFields } = await import("../../src/index/tool-document.ts");
    const index = createSearchIndex();
    await index.add(
      data.tools.map((tool) => ({
        id: `${tool.server}/${tool.name}`,
        fields: toolFields(tool.server, tool),
      })),
    );
    const fitA = await fitWeights(index, "half A");
    const fitB = await fitWeights(index, "half B");
    const byHalf = new Map<string, RerankWeights>();
    for (const q of data.queries) byHalf.set(searchTextOf(q.query), groupOf(q) === "half A" ? fitB : fitA);
    variants.push({
      name: "five terms, weights fit on the other half (cross: fit on B)",
      retrieve: asBinary(byForm((text) => byHalf.get(text) ?? fitB)),
    });
  } else if (values.only === "words") {
    const withAll = {
      ...VOTING_SHOW,
      list: `${VOTING_SHOW.list} all every`,
      get: `${VOTING_SHOW.get} detail`,
    };
    variants.push(
      { name: "all, every and detail vote", retrieve: asBinary(paired(withAll)) },
      {
        name: "siblings among the first 2, cost 0, old words",
        retrieve: asBinary(paired(VOTING_SHOW, { depth: 2, cost: 0 })),
      },
    );
  } else if (values.only === "siblings") {
    for (const [depth, cost] of [
      [10, 1],
      [10, 0],
      [3, 0],
      [2, 0],
      [2, 1],
    ] as const)
      variants.push({
        name: `siblings decided among the first ${depth}, an unexplained word costs ${cost}`,
        retrieve: asBinary(paired(OPERATION_WORDS, { depth, cost })),
      });
  } else {
    variants.push(
      {
        name: "show and view do not vote (kept)",
        retrieve: asBinary(paired(OPERATION_WORDS)),
      },
      { name: `five terms ${JSON.stringify(RERANK_WEIGHTS)}`, retrieve: asBinary(byForm(RERANK_WEIGHTS)) },
    );
  }
  await runExperiment(variants, vendorGroups);
}
