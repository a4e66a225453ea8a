/**
 * What the static word tables' distillers share (scripts/distill-use-table.ts, the single-word
 * table, and bench/experiments/phrase-table.ts, the phrase-distilled one): the principal
 * components of the encoder's vectors, and the directory the static-model loader reads
 * (src/index/embedders/static-embedder.ts, model_type "word-static"): config.json, vocab.txt and
 * model.safetensors ("embeddings" I8 [words, dims], one int8 row per word, and "weights" F32, the
 * row's scale times its weight, so that a row read back is `embeddings[row] · weights[row]`).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Smooth inverse frequency (Arora et al. 2017): a word of probability p weighs a / (a + p). */
export const SIF_A = 1e-3;

/** A vocabulary file's words: one lowercase word per line, most frequent first, each once. */
export function readVocabulary(file: string): string[] {
  return [
    ...new Set(
      readFileSync(file, "utf8")
        .split("\n")
        .map((word) => word.trim())
        .filter((word) => /^[a-z0-9]+$/.test(word)),
    ),
  ];
}

/**
 * The single-word table's rows: each word's vector projected on the components and normalised,
 * weighted by how rare the word is (Zipf over the vocabulary's order: the word of rank r has
 * probability about 1 / (r · H(n))).
 */
export function wordRows(
  vectors: readonly Float32Array[],
  mean: Float64Array,
  components: Float64Array,
  dims: number,
): Float32Array {
  const harmonic = vectors.reduce((sum, _, i) => sum + 1 / (i + 1), 0);
  const rows = new Float32Array(vectors.length * dims);
  for (const [row, vector] of vectors.entries()) {
    const probability = 1 / ((row + 1) * harmonic);
    const projected = project(vector, mean, components, dims);
    const scale = SIF_A / (SIF_A + probability) / (Math.hypot(...projected) || 1);
    for (let c = 0; c < dims; c++) rows[row * dims + c] = projected[c]! * scale;
  }
  return rows;
}

/**
 * Writes a word table: `rows` holds each word's row (words.length × dims, the weight already in
 * it), stored as int8 with one scale per word. `config` is added to config.json.
 */
export function writeWordTable(
  outDir: string,
  words: readonly string[],
  rows: Float32Array,
  dims: number,
  config: Record<string, unknown>,
): void {
  const table = new Int8Array(words.length * dims);
  const weights = new Float32Array(words.length);
  for (let row = 0; row < words.length; row++) {
    let largest = 0;
    for (let c = 0; c < dims; c++) largest = Math.max(largest, Math.abs(rows[row * dims + c]!));
    const scale = largest / 127 || 1;
    for (let c = 0; c < dims; c++) table[row * dims + c] = Math.round(rows[row * dims + c]! / scale);
    weights[row] = largest === 0 ? 0 : scale;
  }
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "vocab.txt"), `${words.join("\n")}\n`);
  writeFileSync(
    join(outDir, "config.json"),
    `${JSON.stringify({ model_type: "word-static", ...config, dims, normalize: true, dtype: "I8" }, null, 2)}\n`,
  );
  writeFileSync(
    join(outDir, "model.safetensors"),
    safetensors({
      embeddings: { dtype: "I8", shape: [words.length, dims], bytes: new Uint8Array(table.buffer) },
      weights: { dtype: "F32", shape: [words.length], bytes: new Uint8Array(weights.buffer) },
    }),
  );
}

/** A vector centred on `center` and projected on the first `dims` rows of `components`. */
export function project(
  vector: Float32Array,
  center: Float64Array,
  components: Float64Array,
  dims: number,
): Float64Array {
  const width = center.length;
  const out = new Float64Array(dims);
  for (let c = 0; c < dims; c++) {
    let sum = 0;
    const base = c * width;
    for (let d = 0; d < width; d++) sum += (vector[d]! - center[d]!) * components[base + d]!;
    out[c] = sum;
  }
  return out;
}

/**
 * The `count` leading eigenvectors of the vectors' covariance, row after row, by block power
 * iteration with Gram-Schmidt: enough for a 512 × 512 matrix, with no linear-algebra package.
 */
export function principalComponents(
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
