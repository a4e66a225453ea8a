#!/usr/bin/env bun
/**
 * A learned re-ranker, judged against the hand-tuned ranking the binary ships (issue: "a learned
 * ranker, optional and shipped in the binary if it wins"). A pairwise logistic regression over a
 * dozen features of each of the best 30 candidates (BM25F score and rank, name precision exact and
 * by stem, operation agreement, server match, where the request's words were found, …), trained on
 * one half of the eval's server split and scored on the other, both ways: the half rows of the
 * output are always held-out figures. Reproducible: the training is deterministic.
 *
 *   bun bench/learned-ranker.ts [--write weights.json]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { askedOperation, statedOperation } from "../src/index/operation-agreement.ts";
import { createSearchIndex, type SearchHit, type SearchIndex } from "../src/index/search-index.ts";
import { STOP_WORDS, stem, tokenize } from "../src/index/tokenizer.ts";
import { type ToolFields, toolFields } from "../src/index/tool-document.ts";
import {
  data,
  type EvalQuery,
  groupOf,
  operationRanked,
  runExperiment,
  searchTextOf,
} from "./retrieval-experiment.ts";

const FEATURES = [
  "bm25f score",
  "1 / rank",
  "name words in the request (exact)",
  "name words in the request (by stem)",
  "request words in the name (by stem)",
  "request words found as written",
  "request words found by stem only",
  "request words found only in parameters",
  "server words in the request",
  "operation agrees",
  "operation conflicts",
  "name length (words)",
] as const;

const words = (text: string) => tokenize(text).filter((word) => !STOP_WORDS.has(word));
const share = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);

function featuresOf(
  query: string,
  fields: ToolFields,
  toolName: string,
  hit: SearchHit,
  rank: number,
): number[] {
  const asked = words(query);
  const askedExact = new Set(asked);
  const askedStems = new Set(asked.map(stem));
  const name = words(fields.name);
  const server = words(fields.server);
  const inField = (text: string) => {
    const list = words(text);
    return { exact: new Set(list), stems: new Set(list.map(stem)) };
  };
  const fieldsWords = [fields.server, fields.name, fields.description].map(inField);
  const params = inField(fields.params);
  let exact = 0;
  let stemOnly = 0;
  let paramsOnly = 0;
  for (const word of askedExact) {
    const s = stem(word);
    const elsewhere = fieldsWords.some((f) => f.exact.has(word) || f.stems.has(s));
    if (fieldsWords.some((f) => f.exact.has(word)) || params.exact.has(word)) exact++;
    else if (elsewhere || params.stems.has(s)) stemOnly++;
    if (!elsewhere && (params.exact.has(word) || params.stems.has(s))) paramsOnly++;
  }
  const operation = askedOperation(query);
  const stated = statedOperation(toolName);
  return [
    hit.score,
    1 / (rank + 1),
    share(name.filter((word) => askedExact.has(word)).length, name.length),
    share(name.filter((word) => askedStems.has(stem(word))).length, name.length),
    share([...askedStems].filter((s) => name.some((word) => stem(word) === s)).length, askedStems.size),
    share(exact, askedExact.size),
    share(stemOnly, askedExact.size),
    share(paramsOnly, askedExact.size),
    share(server.filter((word) => askedStems.has(stem(word))).length, server.length),
    operation && stated && operation === stated ? 1 : 0,
    operation && stated && operation !== stated ? 1 : 0,
    Math.min(name.length, 8) / 8,
  ];
}

interface Candidate {
  id: string;
  x: number[];
}

const fieldsById = new Map<string, { fields: ToolFields; name: string }>(
  data.tools.map((tool) => [
    `${tool.server}/${tool.name}`,
    { fields: toolFields(tool.server, tool), name: tool.name },
  ]),
);

async function candidatesOf(index: SearchIndex, text: string): Promise<Candidate[]> {
  return (await operationRanked(index, text)).map((hit, rank) => {
    const tool = fieldsById.get(hit.id)!;
    return { id: hit.id, x: featuresOf(text, tool.fields, tool.name, hit, rank) };
  });
}

/** Pairwise logistic regression (every relevant candidate against every other), L2, full-batch gradient descent. */
function train(queries: { candidates: Candidate[]; relevant: Set<string> }[]): number[] {
  const pairs: number[][] = [];
  for (const { candidates, relevant } of queries) {
    const good = candidates.filter((c) => relevant.has(c.id));
    const bad = candidates.filter((c) => !relevant.has(c.id));
    for (const g of good) for (const b of bad) pairs.push(g.x.map((v, i) => v - b.x[i]!));
  }
  const w = new Array(FEATURES.length).fill(0);
  const rate = 0.5;
  const l2 = 1e-3;
  for (let epoch = 0; epoch < 300; epoch++) {
    const gradient = w.map((v) => l2 * v);
    for (const d of pairs) {
      const margin = d.reduce((sum, v, i) => sum + v * w[i]!, 0);
      const p = 1 / (1 + Math.exp(margin));
      for (let i = 0; i < d.length; i++) gradient[i] = gradient[i]! - (p * d[i]!) / pairs.length;
    }
    for (let i = 0; i < w.length; i++) w[i] = w[i]! - rate * gradient[i]!;
  }
  return w;
}

const score = (w: number[], x: number[]) => x.reduce((sum, v, i) => sum + v * w[i]!, 0);

if (import.meta.main) {
  const { values } = parseArgs({ options: { write: { type: "string" } } });
  const index = createSearchIndex();
  await index.add([...fieldsById].map(([id, { fields }]) => ({ id, fields })));
  const textOf = (q: EvalQuery) => searchTextOf(q.query);
  const prepared = new Map<string, { q: EvalQuery; candidates: Candidate[]; relevant: Set<string> }>();
  for (const q of data.queries as EvalQuery[]) {
    prepared.set(textOf(q), {
      q,
      candidates: await candidatesOf(index, textOf(q)),
      relevant: new Set(q.expected_groups.flat()),
    });
  }
  const trainedOn = (group: string) => train([...prepared.values()].filter((p) => groupOf(p.q) === group));
  const models = { "half A": trainedOn("half A"), "half B": trainedOn("half B") };
  const all = train([...prepared.values()]);
  const print = (line: string) => process.stdout.write(`${line}\n`);
  for (const [name, w] of [...Object.entries(models), ["all", all] as const])
    print(`weights trained on ${name}: ${FEATURES.map((f, i) => `${f} ${w[i]!.toFixed(2)}`).join(", ")}`);
  // Each half is ranked by the model trained on the other half; cross-half requests by the
  // model trained on everything (their rows are not held-out figures).
  const learned = async (_index: SearchIndex, text: string) => {
    const p = prepared.get(text)!;
    const group = groupOf(p.q);
    const w = group === "half A" ? models["half B"] : group === "half B" ? models["half A"] : all;
    return p.candidates
      .map((c) => ({ id: c.id, score: score(w, c.x) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 10);
  };
  const handTuned = async (_index: SearchIndex, text: string) =>
    prepared
      .get(text)!
      .candidates.slice(0, 10)
      .map((c, i) => ({ id: c.id, score: 100 - i }));
  await runExperiment([
    { name: "hand-tuned (BM25F, operation agreement)", retrieve: handTuned },
    { name: "learned (pairwise logistic, trained on the other half)", retrieve: learned },
  ]);
  if (values.write)
    writeFileSync(values.write, `${JSON.stringify({ features: FEATURES, weights: all }, null, 2)}\n`);
}
