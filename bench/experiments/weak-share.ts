#!/usr/bin/env bun
/**
 * How often `auto` search would call the encoder: the share of an eval's requests with at least
 * one weak text (the whole request or one of its steps, short enough to be fused and in words the
 * encoder has, ranked best under WEAK_SCORE, scaled as the floor is), as catalog-search.ts judges
 * it. No encoder is loaded.
 *
 *   bun bench/experiments/weak-share.ts [EVAL.json]
 */
import { WEAK_SCORE } from "../../src/index/catalog-search.ts";
import { useLiteKnows } from "../../src/index/embedders/use-lite-words.ts";
import { relevanceFloor } from "../../src/index/relevance-floor.ts";
import { requestSteps } from "../../src/index/request-steps.ts";
import { createSearchIndex } from "../../src/index/search-index.ts";
import { toolFields } from "../../src/index/tool-document.ts";
import { isDenseText } from "../../src/index/tool-vectors.ts";
import { data, operationRanked, searchTextOf } from "../retrieval-experiment.ts";

const index = createSearchIndex();
await index.add(
  data.tools.map((tool) => ({ id: `${tool.server}/${tool.name}`, fields: toolFields(tool.server, tool) })),
);
const bySubset = new Map<string, { requests: number; weak: number; texts: number; weakTexts: number }>();
for (const q of data.queries) {
  const text = searchTextOf(q.query);
  const texts = [text, ...requestSteps(text)];
  let weak = 0;
  for (const searched of texts) {
    const best = (await operationRanked(index, searched))[0]?.score ?? 0;
    if (isDenseText(searched) && useLiteKnows(searched) && best < relevanceFloor(searched, WEAK_SCORE))
      weak++;
  }
  for (const key of [q.subset, "ALL"]) {
    const row = bySubset.get(key) ?? { requests: 0, weak: 0, texts: 0, weakTexts: 0 };
    row.requests++;
    row.texts += texts.length;
    row.weakTexts += weak;
    if (weak > 0) row.weak++;
    bySubset.set(key, row);
  }
}
for (const [subset, row] of [...bySubset].sort())
  process.stdout.write(
    `${subset.padEnd(12)} requests ${row.requests}, with a weak text ${row.weak} (${((100 * row.weak) / row.requests).toFixed(1)}%); texts ${row.texts}, weak ${row.weakTexts}\n`,
  );
