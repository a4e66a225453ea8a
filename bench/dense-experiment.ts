#!/usr/bin/env bun
/**
 * The sentence encoder (MCPPROXY_EMBEDDER=USE) judged as an experiment (retrieval-experiment.ts):
 * the binary's lexical ranking against the encoder fused the way the binary fuses it now
 * (min-max normalized scores over the union of both top 50s, tool-vectors.ts) and the way it
 * fused before (the absolute sum over the lexical top 50 and the vector top 50, floor on the sum).
 * Vectors are cached under /tmp/use-cache (the encoder takes minutes for the eval).
 *
 *   bun bench/dense-experiment.ts [EVAL.json]
 */
import { mkdirSync } from "node:fs";
import { basename } from "node:path";
import { loadUseLiteEmbedder } from "../src/index/embedders/use-lite-embedder.ts";
import { fuseRankings } from "../src/index/hybrid-ranking.ts";
import { askedOperation, rescoreByOperation } from "../src/index/operation-agreement.ts";
import { relevanceFloor } from "../src/index/relevance-floor.ts";
import { mergeSteps, type Ranking, requestSteps, STEP_CANDIDATES } from "../src/index/request-steps.ts";
import type { SearchHit, SearchIndex } from "../src/index/search-index.ts";
import { toolFields, toolText } from "../src/index/tool-document.ts";
import { HYBRID_CANDIDATES, RELEVANT_COSINE } from "../src/index/tool-vectors.ts";
import { createVectorIndex } from "../src/index/vector-index.ts";
import { openEmbeddingCache } from "./embedding-cache.ts";
import { data, longTasks, operationRanked, runExperiment, searchTextOf } from "./retrieval-experiment.ts";

const MIN_SCORE = 0.05;
const file = process.argv.slice(2).find((arg) => arg.endsWith(".json")) ?? "etom-msc-bench.json";
mkdirSync("/tmp/use-cache", { recursive: true });
const cache = openEmbeddingCache(await loadUseLiteEmbedder(), `/tmp/use-cache/${basename(file, ".json")}`);

const tools = new Map(data.tools.map((tool) => [`${tool.server}/${tool.name}`, tool]));
const toolVectors = await cache.embed(
  [...tools.values()].map((tool) => toolText(toolFields(tool.server, tool))),
);
const index = createVectorIndex(toolVectors[0]!.length);
[...tools.keys()].forEach((id, i) => index.set(id, toolVectors[i]!));
const texts = [...data.queries, ...longTasks(data.queries)].flatMap((q) => {
  const text = searchTextOf(q.query);
  return [text, ...requestSteps(text)];
});
await cache.embed(texts);
cache.save();
const vectorOf = async (text: string) => (await cache.embed([text]))[0]!;

type RankText = (index: SearchIndex, text: string, wanted: number) => Promise<Ranking<SearchHit>>;

/** As the binary ranks one text without vectors. */
const lexicalText: RankText = async (search, text, wanted) => ({
  hits: (await operationRanked(search, text)).slice(0, wanted),
  floor: relevanceFloor(text, MIN_SCORE),
});

/** Fused now: min-max over the union; relevant by the lexical floor or the cosine. */
const normalizedText =
  (weight: number, relevantCosine = RELEVANT_COSINE, denseCandidates = HYBRID_CANDIDATES): RankText =>
  async (search, text, wanted) => {
    const floor = relevanceFloor(text, MIN_SCORE);
    const query = await vectorOf(text);
    // As tool-catalog.ts does: the best 50, re-scored by the operation the text names.
    const asked = askedOperation(text);
    let hits = await search.search(text, HYBRID_CANDIDATES);
    if (asked) hits = rescoreByOperation(asked, hits, (id) => id.slice(id.lastIndexOf("/") + 1));
    const fused = fuseRankings(
      hits,
      (id) => index.similarity(id, query),
      index.search(query, denseCandidates),
      weight,
      Number.POSITIVE_INFINITY,
    )
      .filter((hit) => hit.lexical >= floor || hit.cosine >= relevantCosine)
      .slice(0, wanted);
    return { hits: fused, floor: 0 };
  };

/** Fused before: (1 − w)·bm25 + w·max(0, cosine) over the lexical and vector top 50, floor on the sum. */
const absoluteText =
  (weight: number): RankText =>
  async (search, text, wanted) => {
    const query = await vectorOf(text);
    const lexical = await search.search(text, HYBRID_CANDIDATES);
    const lexicalScore = new Map(lexical.map((hit) => [hit.id, hit.score]));
    const ids = new Set([
      ...lexical.map((hit) => hit.id),
      ...index.search(query, HYBRID_CANDIDATES).map((h) => h.id),
    ]);
    const hits = [...ids]
      .map((id) => ({
        id,
        score: (1 - weight) * (lexicalScore.get(id) ?? 0) + weight * Math.max(0, index.similarity(id, query)),
      }))
      .sort((a, b) => b.score - a.score)
      .slice(0, wanted);
    return { hits, floor: relevanceFloor(text, MIN_SCORE) };
  };

/** As the binary puts a request together: the whole request and its steps, merged by score. */
const request = (rankText: RankText) => async (search: SearchIndex, text: string) => {
  const steps = requestSteps(text);
  const whole = await rankText(search, text, steps.length > 0 ? STEP_CANDIDATES : 10);
  if (steps.length === 0) return whole.hits.filter((hit) => hit.score >= whole.floor).slice(0, 10);
  const rankings = await Promise.all(steps.map((step) => rankText(search, step, STEP_CANDIDATES)));
  return mergeSteps(whole, rankings, 10);
};

await runExperiment([
  { name: "lexical (the binary with BM25)", retrieve: request(lexicalText) },
  { name: "USE, fused as before (absolute sum, w 0.2)", retrieve: request(absoluteText(0.2)) },
  { name: "USE, min-max over the union, w 0.4 (now)", retrieve: request(normalizedText(0.4)) },
  { name: "USE, min-max over the union, w 0.3", retrieve: request(normalizedText(0.3)) },
  { name: "USE, min-max over the union, w 0.5", retrieve: request(normalizedText(0.5)) },
  {
    name: "USE, min-max, w 0.4, lexical candidates only",
    retrieve: request(normalizedText(0.4, RELEVANT_COSINE, 0)),
  },
]);
cache.save();
