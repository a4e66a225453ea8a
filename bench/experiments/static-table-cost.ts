#!/usr/bin/env bun
/**
 * What a static word table (scripts/distill-use-table.ts) costs when fused in every search, at
 * about 10,000 tools (the eval's tools repeated under renamed servers): indexing time against the
 * lexical index alone, the time a search adds (the request's vector, the vector top 50, the
 * fusion) against the lexical search as the binary runs it, the table's load time, and its size
 * on disk and as the build would pack it (zstd, src/index/embedders/packed-file.ts).
 *
 *   bun bench/experiments/static-table-cost.ts [EVAL.json] --table=DIR [--tools 10000] [--queries 500]
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { packBytes } from "../../src/index/embedders/packed-file.ts";
import { loadStaticEmbedder } from "../../src/index/embedders/static-embedder.ts";
import { fuseRankings } from "../../src/index/hybrid-ranking.ts";
import {
  askedOperation,
  OPERATION_CANDIDATES,
  rescoreByOperation,
} from "../../src/index/operation-agreement.ts";
import { contentWordCount, FLOOR_WORDS } from "../../src/index/relevance-floor.ts";
import { createSearchIndex } from "../../src/index/search-index.ts";
import { toolFields, toolText } from "../../src/index/tool-document.ts";
import { HYBRID_CANDIDATES } from "../../src/index/tool-vectors.ts";
import { createVectorIndex } from "../../src/index/vector-index.ts";
import type { UpstreamTool } from "../../src/upstream-tool.ts";
import { requireEvalSet } from "../eval-catalog.ts";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    table: { type: "string" },
    tools: { type: "string", default: "10000" },
    queries: { type: "string", default: "500" },
  },
  allowPositionals: true,
});
const file = requireEvalSet(positionals.find((arg) => arg.endsWith(".json")));
if (!values.table) {
  process.stderr.write("--table=DIR is required\n");
  process.exit(2);
}
const tableDir = values.table;
const data = JSON.parse(readFileSync(file, "utf8")) as {
  tools: (UpstreamTool & { server: string })[];
  queries: { query: string }[];
};
const wanted = Number(values.tools);
const tools = Array.from({ length: wanted }, (_, i) => {
  const tool = data.tools[i % data.tools.length]!;
  const copy = Math.floor(i / data.tools.length);
  return { ...tool, server: copy === 0 ? tool.server : `${tool.server} ${copy}` };
});
const docs = tools.map((tool) => ({
  id: `${tool.server}/${tool.name}`,
  fields: toolFields(tool.server, tool),
}));
const ms = (from: number) => performance.now() - from;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)]!;

let started = performance.now();
const embedder = loadStaticEmbedder(tableDir, "table");
const loadMs = ms(started);

started = performance.now();
const index = createSearchIndex();
await index.add(docs);
const lexicalMs = ms(started);

started = performance.now();
const vectors = createVectorIndex(embedder.dimensions);
const embedded = await embedder.embed(docs.map((doc) => toolText(doc.fields)));
for (const [i, doc] of docs.entries()) vectors.set(doc.id, embedded[i]!);
const tableMs = ms(started);

const queries = data.queries
  .map((q) => q.query)
  .filter((text) => contentWordCount(text) <= FLOOR_WORDS)
  .slice(0, Number(values.queries));
const lexicalTimes: number[] = [];
const fusedTimes: number[] = [];
const embedTimes: number[] = [];
const vectorTimes: number[] = [];
const rescoredTimes: number[] = [];
for (let round = 0; round < 2; round++) {
  for (const text of queries) {
    started = performance.now();
    const asked = askedOperation(text);
    let hits = await index.search(text, OPERATION_CANDIDATES);
    if (asked) hits = rescoreByOperation(asked, hits, (id) => id.slice(id.lastIndexOf("/") + 1));
    const lexical = ms(started);
    started = performance.now();
    let wide = await index.search(text, HYBRID_CANDIDATES);
    if (asked) wide = rescoreByOperation(asked, wide, (id) => id.slice(id.lastIndexOf("/") + 1));
    let step = performance.now();
    const [query] = await embedder.embed([text]);
    const embedMs = ms(step);
    step = performance.now();
    const dense = vectors.search(query!, HYBRID_CANDIDATES);
    const vectorMs = ms(step);
    fuseRankings(wide, (id) => vectors.similarity(id, query!), dense, 0.2, 10);
    const fused = ms(started);
    // The lexical candidates re-scored by their cosine, no vector top 50.
    step = performance.now();
    let narrow = await index.search(text, HYBRID_CANDIDATES);
    if (asked) narrow = rescoreByOperation(asked, narrow, (id) => id.slice(id.lastIndexOf("/") + 1));
    const [again] = await embedder.embed([text]);
    fuseRankings(narrow, (id) => vectors.similarity(id, again!), [], 0.2, 10);
    const rescored = ms(step);
    if (round === 1) {
      lexicalTimes.push(lexical);
      fusedTimes.push(fused);
      embedTimes.push(embedMs);
      vectorTimes.push(vectorMs);
      rescoredTimes.push(rescored);
    }
  }
}

const bytes = (name: string) => statSync(join(tableDir, name)).size;
const packed = (name: string) => packBytes(readFileSync(join(tableDir, name)), 1, 19).length;
const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
const lines = [
  `${tools.length} tools, ${queries.length} requests of at most ${FLOOR_WORDS} content words (timed on the second pass)`,
  `table ${values.table}: ${embedder.dimensions} dimensions, loaded in ${loadMs.toFixed(0)} ms`,
  `index: lexical ${(lexicalMs / 1000).toFixed(2)} s, table vectors ${(tableMs / 1000).toFixed(2)} s: ${(
    (lexicalMs + tableMs) / lexicalMs
  ).toFixed(2)}× the lexical time`,
  `search p50 / p95: lexical ${median(lexicalTimes).toFixed(2)} / ${p95(lexicalTimes).toFixed(2)} ms, fused ${median(
    fusedTimes,
  ).toFixed(2)} / ${p95(fusedTimes).toFixed(2)} ms (of which the request's vector ${median(
    embedTimes,
  ).toFixed(
    2,
  )} ms, the vector top 50 ${median(vectorTimes).toFixed(2)} ms); lexical candidates re-scored by cosine only ${median(
    rescoredTimes,
  ).toFixed(2)} / ${p95(rescoredTimes).toFixed(2)} ms`,
  `size: model.safetensors ${mb(bytes("model.safetensors"))} (packed ${mb(packed("model.safetensors"))}), vocab.txt ${mb(
    bytes("vocab.txt"),
  )} (packed ${mb(packed("vocab.txt"))})`,
];
process.stdout.write(`${lines.join("\n")}\n`);
