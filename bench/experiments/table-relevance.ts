#!/usr/bin/env bun
/**
 * Issue 37: can a word table's cosine tell an off-topic request from a paraphrase? For each
 * table, the right tool's cosine over an eval's single-tool requests (median, 5th and 25th
 * percentiles) against the best cosine over the whole catalogue of the e2e tests' off-topic
 * requests, and the share of requests whose right tool's cosine exceeds the highest of those.
 *
 *   bun bench/experiments/table-relevance.ts EVAL.json --table=DIR[,DIR…]
 */
import { readFileSync } from "node:fs";
import { loadStaticEmbedder } from "../../src/index/embedders/static-embedder.ts";
import { toolFields, toolText } from "../../src/index/tool-document.ts";

const OFF_TOPIC = [
  "tell me a funny joke about a number of cats and dogs playing in the park",
  "plan a weekend hiking trip in the alps with my family and return a packing list",
  "sing me a song about the sea",
];
const file = process.argv.slice(2).find((arg) => arg.endsWith(".json"));
const tables =
  process.argv
    .find((arg) => arg.startsWith("--table="))
    ?.slice(8)
    .split(",") ?? [];
if (!file || tables.length === 0) {
  process.stderr.write("usage: bun bench/experiments/table-relevance.ts EVAL.json --table=DIR[,DIR…]\n");
  process.exit(2);
}
const data = JSON.parse(readFileSync(file, "utf8")) as {
  tools: { server: string; name: string; description?: string; inputSchema?: unknown }[];
  queries: { query: string; expected_groups: string[][] }[];
};
const ids = data.tools.map((tool) => `${tool.server}/${tool.name}`);
const known = new Set(data.tools.map((tool) => `${tool.server}/${tool.name}`));
// Single-tool requests whose tool the catalogue still lists (the quick start's servers change).
const single = data.queries.filter(
  (q) => q.expected_groups.length === 1 && q.expected_groups[0]!.some((id) => known.has(id)),
);
const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

for (const dir of tables) {
  const embedder = loadStaticEmbedder(dir, dir);
  const toolVectors = await embedder.embed(
    data.tools.map((tool) => toolText(toolFields(tool.server, tool as never))),
  );
  const byId = new Map(ids.map((id, i) => [id, toolVectors[i]!]));
  const best = (vector: Float32Array) => Math.max(...toolVectors.map((tool) => dot(tool, vector)));
  const queryVectors = await embedder.embed(single.map((q) => q.query));
  const right = single
    .map((q, i) =>
      Math.max(
        ...q.expected_groups[0]!.map((id) => (byId.has(id) ? dot(byId.get(id)!, queryVectors[i]!) : -1)),
      ),
    )
    .sort((a, b) => a - b);
  const offTopic = (await embedder.embed(OFF_TOPIC)).map(best);
  const highest = Math.max(...offTopic);
  const above = right.filter((cosine) => cosine > highest).length / right.length;
  process.stdout.write(
    `${dir}: right tool p5 ${quantile(right, 0.05).toFixed(2)}, p25 ${quantile(right, 0.25).toFixed(2)}, median ${quantile(right, 0.5).toFixed(2)}; off-topic best ${offTopic.map((c) => c.toFixed(2)).join(" / ")}; right tools above the highest off-topic ${(100 * above).toFixed(0)}% (${single.length} requests)\n`,
  );
}
