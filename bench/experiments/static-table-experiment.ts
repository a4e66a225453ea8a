#!/usr/bin/env bun
/**
 * Issue 37: a static word table distilled from the built-in encoder (scripts/distill-use-table.ts,
 * vocabulary from bench/experiments/table-vocab.ts) fused with BM25 in every search, and operation
 * synonyms from WordNet (bench/experiments/operation-synonyms.ts) appended to each tool at index
 * time, each against the binary's lexical ranking (bench/retrieval-experiment.ts: paired bootstrap
 * 95% intervals, the split by server).
 *
 *   bun bench/experiments/static-table-experiment.ts [EVAL.json] --table=DIR [--synonyms=FILE.json]
 *     [--weights=0.2,0.3,0.4] [--every=0.2,0.3] [--synonym-weights=0.2,0.3] [--vector-text=full|short]
 *     [--synonym-field=description|params] [--cosine=0.3] [--rescore=0.2] [--expand=0.6] [--only=1,2]
 *
 * `--cosine=9` judges relevance lexically only (the table's cosines cannot say a request is
 * off-topic); `--rescore` re-scores the lexical top 50 by the cosine, with no vector candidates
 * (what fits +1 ms at 10,000 tools); `--expand` is the nearest-words fallback (table-neighbours.ts).
 * A subset `few shared` is added: single-tool requests of which less than half of the content
 * words occur in a right tool's text.
 *
 * The fusion is the hybrid search's (tool-vectors.ts): min-max over the union of the lexical and
 * the vector top 50s, `(1 − w)·lexical + w·cosine`, relevance judged per ranking (a ranking is kept
 * when one candidate reaches the lexical floor or the cosine `--cosine`, default 0.3).
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { loadStaticEmbedder } from "../../src/index/embedders/static-embedder.ts";
import { fuseRankings } from "../../src/index/hybrid-ranking.ts";
import { askedOperation, rescoreByOperation } from "../../src/index/operation-agreement.ts";
import { contentWordCount, FLOOR_WORDS, relevanceFloor } from "../../src/index/relevance-floor.ts";
import { STOP_WORDS, stem, tokenize } from "../../src/index/tokenizer.ts";
import { type ToolFields, toolFields, toolText } from "../../src/index/tool-document.ts";
import { HYBRID_CANDIDATES } from "../../src/index/tool-vectors.ts";
import { createVectorIndex } from "../../src/index/vector-index.ts";
import { requireEvalSet } from "../eval-catalog.ts";
import {
  data,
  type EvalQuery,
  operationRanked,
  type RankText,
  requestRanking,
  runExperiment,
  type Variant,
} from "../retrieval-experiment.ts";
import { operationSynonyms } from "./operation-synonyms.ts";
import { tableNeighbours } from "./table-neighbours.ts";

const MIN_SCORE = 0.05;
requireEvalSet(process.argv.slice(2).find((arg) => arg.endsWith(".json")));
const flag = (name: string) =>
  process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const tableDir = flag("table");
const synonymsFile = flag("synonyms");
const relevantCosine = Number(flag("cosine") ?? 0.3);
const vectorText = flag("vector-text") ?? "full";
const weights = (flag("weights") ?? "0.2,0.3,0.4").split(",").filter(Boolean).map(Number);
const everyWeights = (flag("every") ?? "0.2,0.3").split(",").filter(Boolean).map(Number);
// --rescore=0.2,0.3: the lexical top 50 re-scored by the cosine, no vector candidates (cheaper).
const rescoreWeights = (flag("rescore") ?? "").split(",").filter(Boolean).map(Number);
const synonymWeights = (flag("synonym-weights") ?? "0.2,0.3").split(",").filter(Boolean).map(Number);
const embedder = tableDir ? loadStaticEmbedder(tableDir, `table:${tableDir}`) : undefined;
const synonyms = synonymsFile
  ? (JSON.parse(readFileSync(synonymsFile, "utf8")) as Record<string, string[]>)
  : undefined;

/** The tool's fields with the synonyms of its operation appended to the description. */
const synonymField = (flag("synonym-field") ?? "description") as "description" | "params" | "name";
const withSynonyms = (fields: ToolFields, tool: { name: string; description?: string }): ToolFields => {
  const added = synonyms ? operationSynonyms(synonyms, tool.name, tool.description ?? "") : [];
  return added.length > 0
    ? { ...fields, [synonymField]: `${fields[synonymField]}\n${added.join(" ")}` }
    : fields;
};

/**
 * Requests that share few words with their tool: a single-tool request of which less than half
 * of the content words (by stem) occur in any right tool's text. Defined by the ground truth, so
 * a subset to read, never to tune on.
 */
const stems = (text: string) =>
  new Set(
    tokenize(text)
      .filter((w) => !STOP_WORDS.has(w))
      .map(stem),
  );
const toolStems = new Map(
  data.tools.map((tool) => [`${tool.server}/${tool.name}`, stems(toolText(toolFields(tool.server, tool)))]),
);
const fewShared = (q: EvalQuery) => {
  if (q.expected_groups.length !== 1) return [];
  const words = [...stems(q.query)];
  if (words.length === 0) return [];
  const best = Math.max(
    ...q.expected_groups[0]!.map(
      (id) => words.filter((w) => toolStems.get(id)?.has(w)).length / words.length,
    ),
  );
  return best < 0.5 ? ["few shared"] : [];
};

/** The table's vectors of every tool, with or without the synonyms in the embedded text. */
const vectorIndexOf = async (isSynonyms: boolean) => {
  if (!embedder) return undefined;
  const index = createVectorIndex(embedder.dimensions);
  const texts = data.tools.map((tool) => {
    const fields = toolFields(tool.server, tool);
    const text = isSynonyms ? withSynonyms(fields, tool) : fields;
    // --vector-text=short: the vector of the server, name and description only, no parameters.
    return toolText(vectorText === "short" ? { ...text, params: "" } : text);
  });
  const vectors = await embedder.embed(texts);
  for (const [i, tool] of data.tools.entries()) index.set(`${tool.server}/${tool.name}`, vectors[i]!);
  return index;
};
const plainVectors = await vectorIndexOf(false);
const synonymVectors = synonyms ? await vectorIndexOf(true) : undefined;

/** As the binary ranks one text without vectors. */
const lexicalText: RankText = async (search, text, wanted) => ({
  hits: (await operationRanked(search, text)).slice(0, wanted),
  floor: relevanceFloor(text, MIN_SCORE),
});

/** As the hybrid search fuses one text (tool-catalog.ts, tool-vectors.ts). */
const fusedText =
  (
    vectors: ReturnType<typeof createVectorIndex>,
    weight: number,
    maxWords: number,
    /** How many vector candidates join the lexical ones; 0 re-scores the lexical top 50 only. */
    denseCandidates = HYBRID_CANDIDATES,
  ): RankText =>
  async (search, text, wanted) => {
    if (contentWordCount(text) > maxWords) return lexicalText(search, text, wanted);
    const floor = relevanceFloor(text, MIN_SCORE);
    const [query] = await embedder!.embed([text]);
    const asked = askedOperation(text);
    let hits = await search.search(text, HYBRID_CANDIDATES);
    if (asked) hits = rescoreByOperation(asked, hits, (id) => id.slice(id.lastIndexOf("/") + 1));
    const fused = fuseRankings(
      hits,
      (id) => vectors.similarity(id, query!),
      denseCandidates > 0 ? vectors.search(query!, denseCandidates) : [],
      weight,
      Number.POSITIVE_INFINITY,
    );
    const isRelevant = fused.some((hit) => hit.lexical >= floor || hit.cosine >= relevantCosine);
    return { hits: isRelevant ? fused.slice(0, wanted) : [], floor: 0 };
  };

/**
 * --expand=COSINE: lexical, and when nothing of a text's ranking reaches its floor, the text again
 * with each content word's two nearest catalogue words by the table (at least COSINE) added; that
 * ranking is kept when it reaches the floor of the expanded text. Relevance stays lexical.
 */
const expandCosine = flag("expand");
const neighbours =
  tableDir && expandCosine
    ? tableNeighbours(
        tableDir,
        new Set(data.tools.flatMap((tool) => tokenize(toolText(toolFields(tool.server, tool))))),
      )
    : undefined;
const expandedText: RankText = async (search, text, wanted) => {
  const plain = await lexicalText(search, text, wanted);
  if (plain.hits.some((hit) => hit.score >= plain.floor)) return plain;
  const words = [...new Set(tokenize(text).filter((word) => !STOP_WORDS.has(word)))];
  const added = words.flatMap((word) => neighbours!(word, 2, Number(expandCosine)));
  if (added.length === 0) return plain;
  return lexicalText(search, `${text} ${added.join(" ")}`, wanted);
};

/** As the binary puts a request together (retrieval-experiment.ts). */
const request = requestRanking;

const SOURCE = tableDir ? `table ${basename(tableDir)}` : "";
const ANY = Number.POSITIVE_INFINITY;
const variants: Variant[] = [{ name: "lexical (the binary with BM25)", retrieve: request(lexicalText) }];
if (plainVectors) {
  for (const w of weights)
    variants.push({
      name: `${SOURCE}, w ${w}, texts up to ${FLOOR_WORDS} words fused`,
      retrieve: request(fusedText(plainVectors, w, FLOOR_WORDS)),
    });
  for (const w of rescoreWeights)
    variants.push({
      name: `${SOURCE}, w ${w}, lexical top 50 re-scored (no vector candidates), up to ${FLOOR_WORDS} words`,
      retrieve: request(fusedText(plainVectors, w, FLOOR_WORDS, 0)),
    });
  for (const w of rescoreWeights)
    variants.push({
      name: `${SOURCE}, w ${w}, lexical top 50 re-scored, every text`,
      retrieve: request(fusedText(plainVectors, w, ANY, 0)),
    });
  for (const w of everyWeights)
    variants.push({
      name: `${SOURCE}, w ${w}, every text fused`,
      retrieve: request(fusedText(plainVectors, w, ANY)),
    });
}
if (synonyms) {
  variants.push({
    name: "operation synonyms, lexical",
    fields: withSynonyms,
    retrieve: request(lexicalText),
  });
  if (synonymVectors)
    for (const w of synonymWeights)
      variants.push({
        name: `operation synonyms + ${SOURCE} (synonyms embedded too), w ${w}, up to ${FLOOR_WORDS} words`,
        fields: withSynonyms,
        retrieve: request(fusedText(synonymVectors, w, FLOOR_WORDS)),
      });
}
if (neighbours)
  variants.push({
    name: `lexical, table neighbours (cosine ${expandCosine}) when nothing reaches the floor`,
    retrieve: request(expandedText),
  });
const only = flag("only");
const picked = only ? only.split(",").map(Number) : variants.map((_, i) => i);
process.stdout.write(`${variants.map((v, i) => `${i}: ${v.name}`).join("\n")}\n`);
await runExperiment(
  [variants[0]!, ...picked.filter((i) => i > 0 && variants[i]).map((i) => variants[i]!)],
  fewShared,
);
