#!/usr/bin/env bun
/**
 * The sentence encoder (MCPPROXY_EMBEDDER=USE) judged as an experiment (bench/retrieval-experiment.ts):
 * the binary's lexical ranking against the encoder fused the way the binary fuses it now
 * (min-max normalized scores over the union of both top 50s, tool-vectors.ts) and the way it
 * fused before (the absolute sum over the lexical top 50 and the vector top 50, floor on the sum).
 * Vectors are cached under /tmp/use-cache (the encoder takes minutes for the eval).
 *
 *   bun bench/experiments/dense-experiment.ts [EVAL.json] [--only=2,8] [--table=DIR]
 *     [--max-tokens=48,64 --against=8]   (tool texts cut at N ids, judged against variant 8)
 */
import { mkdirSync } from "node:fs";
import { basename } from "node:path";
import type { Embedder } from "../../src/index/embedders/embedder.ts";
import { loadStaticEmbedder } from "../../src/index/embedders/static-embedder.ts";
import { loadUseLiteEmbedder } from "../../src/index/embedders/use-lite-embedder.ts";
import { useLiteKnows } from "../../src/index/embedders/use-lite-words.ts";
import { fuseRankings } from "../../src/index/hybrid-ranking.ts";
import { askedOperation, rescoreByOperation } from "../../src/index/operation-agreement.ts";
import { relevanceFloor } from "../../src/index/relevance-floor.ts";
import { mergeSteps, requestSteps, STEP_CANDIDATES } from "../../src/index/request-steps.ts";
import type { SearchIndex } from "../../src/index/search-index.ts";
import { STOP_WORDS, tokenize } from "../../src/index/tokenizer.ts";
import { toolFields, toolText } from "../../src/index/tool-document.ts";
import { HYBRID_CANDIDATES, RELEVANT_COSINE } from "../../src/index/tool-vectors.ts";
import { createVectorIndex, type VectorIndex } from "../../src/index/vector-index.ts";
import { requireEvalSet } from "../eval-catalog.ts";
import {
  data,
  longTasks,
  operationRanked,
  type RankText,
  requestRanking,
  runExperiment,
  searchTextOf,
} from "../retrieval-experiment.ts";
import { openEmbeddingCache } from "./embedding-cache.ts";

const MIN_SCORE = 0.05;
const file = requireEvalSet(process.argv.slice(2).find((arg) => arg.endsWith(".json")));
// --table=DIR: the same variants with a static word table (scripts/distill-use-table.ts) instead.
const table = process.argv.find((arg) => arg.startsWith("--table="))?.slice(8);
mkdirSync("/tmp/use-cache", { recursive: true });
/** Vectors kept by the embedder's id too: the encoder's id names its cut of a text. */
const cacheOf = (embedder: Embedder) =>
  openEmbeddingCache(
    embedder,
    `/tmp/use-cache/${basename(file, ".json")}-${embedder.id.replace(/[^\w.=-]+/g, "_")}`,
  );
const cache = cacheOf(
  table ? loadStaticEmbedder(table, `table:${basename(table)}`) : await loadUseLiteEmbedder(),
);

const tools = new Map(data.tools.map((tool) => [`${tool.server}/${tool.name}`, tool]));
const toolVectors = await cache.embed(
  [...tools.values()].map((tool) => toolText(toolFields(tool.server, tool))),
);
const index = createVectorIndex(toolVectors[0]!.length);
for (const [i, id] of [...tools.keys()].entries()) index.set(id, toolVectors[i]!);
const texts = [...data.queries, ...longTasks(data.queries)].flatMap((q) => {
  const text = searchTextOf(q.query);
  return [text, ...requestSteps(text)];
});
await cache.embed(texts);
cache.save();
// --max-tokens=48,64: the shipped fusion again with the tools' vectors from texts cut at N ids
// (the encoder cuts at 64; Infinity reads whole texts up to 1,000 characters).
const caps = (process.argv.find((arg) => arg.startsWith("--max-tokens="))?.slice(13) ?? "")
  .split(",")
  .filter(Boolean)
  .map(Number);
const cappedIndexes = new Map<number, VectorIndex>();
for (const cap of caps) {
  const capped = cacheOf(await loadUseLiteEmbedder({ maxTokens: cap }));
  const vectors = await capped.embed(
    [...tools.values()].map((tool) => toolText(toolFields(tool.server, tool))),
  );
  capped.save();
  const cappedIndex = createVectorIndex(vectors[0]!.length);
  for (const [i, id] of [...tools.keys()].entries()) cappedIndex.set(id, vectors[i]!);
  cappedIndexes.set(cap, cappedIndex);
}
const vectorOf = async (text: string) => (await cache.embed([text]))[0]!;

/** As the binary ranks one text without vectors. */
const lexicalText: RankText = async (search, text, wanted) => ({
  hits: (await operationRanked(search, text)).slice(0, wanted),
  floor: relevanceFloor(text, MIN_SCORE),
});

/** Fused now: min-max over the union; relevant by the lexical floor or the cosine. */
const normalizedText =
  (
    weight: number,
    relevantCosine = RELEVANT_COSINE,
    denseCandidates = HYBRID_CANDIDATES,
    /** Relevance judged for the ranking as a whole: all of it when one candidate is relevant. */
    isGated = false,
    lexicalScale: "min-max" | "max" = "min-max",
    vectors: VectorIndex = index,
  ): RankText =>
  async (search, text, wanted) => {
    const floor = relevanceFloor(text, MIN_SCORE);
    const query = await vectorOf(text);
    // As tool-catalog.ts does: the best 50, re-scored by the operation the text names.
    const asked = askedOperation(text);
    let hits = await search.search(text, HYBRID_CANDIDATES);
    if (asked) hits = rescoreByOperation(asked, hits, (id) => id.slice(id.lastIndexOf("/") + 1));
    const fused = fuseRankings(
      hits,
      (id) => vectors.similarity(id, query),
      vectors.search(query, denseCandidates),
      weight,
      Number.POSITIVE_INFINITY,
      lexicalScale,
    );
    const isRelevant = (hit: { lexical: number; cosine: number }) =>
      hit.lexical >= floor || hit.cosine >= relevantCosine;
    const kept = isGated ? (fused.some(isRelevant) ? fused : []) : fused.filter(isRelevant);
    return { hits: kept.slice(0, wanted), floor: 0 };
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

/**
 * Lexical, and fused only when the lexical ranking is empty (nothing reaches the floor) or, with
 * `weakBelow`, when its best is under that many floors: the encoder as a fallback for the requests
 * the words miss, the rest as lexical as before.
 */
const fallbackText =
  (fused: RankText, weakBelow = 1): RankText =>
  async (search, text, wanted) => {
    const lexical = await lexicalText(search, text, wanted);
    const best = lexical.hits[0]?.score ?? 0;
    return best >= weakBelow * lexical.floor ? lexical : fused(search, text, wanted);
  };

/** Fused only for texts the encoder has words for (useLiteKnows); the others lexical. */
const knownFused =
  (fused: RankText): RankText =>
  (search, text, wanted) =>
    useLiteKnows(text) ? fused(search, text, wanted) : lexicalText(search, text, wanted);

/** Fused only for texts of at most `words` distinct content words; longer ones lexical. */
const shortFused =
  (fused: RankText, words: number): RankText =>
  (search, text, wanted) =>
    contentWords(text) <= words ? fused(search, text, wanted) : lexicalText(search, text, wanted);
const contentWords = (text: string) => new Set(tokenize(text).filter((word) => !STOP_WORDS.has(word))).size;

/** The steps fused, the whole request of several steps lexical. */
const stepsFused = (fused: RankText) => async (search: SearchIndex, text: string) => {
  const steps = requestSteps(text);
  if (steps.length === 0) return request(fused)(search, text);
  const whole = await lexicalText(search, text, STEP_CANDIDATES);
  const rankings = await Promise.all(steps.map((step) => fused(search, step, STEP_CANDIDATES)));
  return mergeSteps(whole, rankings, 10);
};

/** As the binary puts a request together (retrieval-experiment.ts). */
const request = requestRanking;

/** What the dense side is, in the variants' names. */
const SOURCE = table ? `table ${basename(table)}` : "USE";
const VARIANTS = [
  { name: "lexical (the binary with BM25)", retrieve: request(lexicalText) },
  { name: `${SOURCE}, fused as before (absolute sum, w 0.2)`, retrieve: request(absoluteText(0.2)) },
  { name: `${SOURCE}, min-max over the union, w 0.4`, retrieve: request(normalizedText(0.4)) },
  { name: `${SOURCE}, min-max over the union, w 0.3`, retrieve: request(normalizedText(0.3)) },
  { name: `${SOURCE}, min-max over the union, w 0.5`, retrieve: request(normalizedText(0.5)) },
  {
    name: `${SOURCE}, min-max, w 0.4, lexical candidates only`,
    retrieve: request(normalizedText(0.4, RELEVANT_COSINE, 0)),
  },
  {
    name: `${SOURCE}, w 0.4, steps fused, a request of several steps lexical`,
    retrieve: stepsFused(normalizedText(0.4)),
  },
  {
    name: `${SOURCE}, w 0.4, texts up to 12 content words fused (FLOOR_WORDS)`,
    retrieve: request(shortFused(normalizedText(0.4), 12)),
  },
  {
    name: `${SOURCE}, w 0.4, up to 12 content words fused, relevance judged per ranking`,
    retrieve: request(shortFused(normalizedText(0.4, RELEVANT_COSINE, HYBRID_CANDIDATES, true), 12)),
  },
  {
    name: `${SOURCE}, w 0.4, relevance judged per ranking`,
    retrieve: request(normalizedText(0.4, RELEVANT_COSINE, HYBRID_CANDIDATES, true)),
  },
  {
    name: `${SOURCE}, w 0.4, up to 12 words fused, per ranking, lexical over its best (not min-max)`,
    retrieve: request(shortFused(normalizedText(0.4, RELEVANT_COSINE, HYBRID_CANDIDATES, true, "max"), 12)),
  },
  {
    name: `${SOURCE}, w 0.4, per ranking, lexical over its best (not min-max)`,
    retrieve: request(normalizedText(0.4, RELEVANT_COSINE, HYBRID_CANDIDATES, true, "max")),
  },
  {
    name: `${SOURCE}, lexical unless nothing reaches the floor, then as shipped (8)`,
    retrieve: request(
      fallbackText(shortFused(normalizedText(0.4, RELEVANT_COSINE, HYBRID_CANDIDATES, true), 12)),
    ),
  },
  {
    name: `${SOURCE}, lexical unless its best is under 2 floors, then as shipped (8)`,
    retrieve: request(
      fallbackText(shortFused(normalizedText(0.4, RELEVANT_COSINE, HYBRID_CANDIDATES, true), 12), 2),
    ),
  },
  {
    name: `${SOURCE}, as shipped (8), texts the encoder has few whole words for lexical (use-lite-words.ts)`,
    retrieve: request(
      knownFused(shortFused(normalizedText(0.4, RELEVANT_COSINE, HYBRID_CANDIDATES, true), 12)),
    ),
  },
  ...caps.map((cap) => ({
    name: `${SOURCE}, as shipped (8), tool texts cut at ${cap} ids`,
    retrieve: request(
      shortFused(
        normalizedText(0.4, RELEVANT_COSINE, HYBRID_CANDIDATES, true, "min-max", cappedIndexes.get(cap)),
        12,
      ),
    ),
  })),
];
// --only a,b: the variants by index (0 is the baseline and always runs; --against=N runs N as the baseline).
const only = process.argv.find((arg) => arg.startsWith("--only="))?.slice(7);
const picked = only ? only.split(",").map(Number) : VARIANTS.map((_, i) => i);
const against = Number(process.argv.find((arg) => arg.startsWith("--against="))?.slice(10) ?? 0);
await runExperiment([VARIANTS[against]!, ...picked.filter((i) => i !== against).map((i) => VARIANTS[i]!)]);
cache.save();
