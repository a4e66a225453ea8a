/**
 * Turns texts into unit-length vectors for the hybrid search. Tool documents are embedded once
 * per changed hash; queries once per search. Implementations: static tables (model2vec and
 * word-level, pure TypeScript), ONNX transformer models (transformers.js) and any
 * OpenAI-compatible `/v1/embeddings` endpoint.
 */
export interface Embedder {
  /** What produced the vectors, recorded in the index: a different id means every tool is re-embedded. */
  readonly id: string;
  readonly dimensions: number;
  /** One L2-normalized vector per text, in order. `onProgress` reports texts done so far. */
  embed(texts: readonly string[], onProgress?: (done: number) => void): Promise<Float32Array[]>;
  /**
   * Whether the model has words for a request's text; one it has none for would get a vector of
   * noise, and is searched lexically (the built-in encoder: use-lite-words.ts). Absent: every text.
   */
  knows?(text: string): Promise<boolean>;
  close?(): Promise<void>;
}

export function l2Normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < vector.length; i++) norm += vector[i]! * vector[i]!;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}

/**
 * An embedder over a model that embeds a batch at a time (the ONNX and USE paths): the dimensions
 * are probed once, and texts go in batches of `batchSize`, with a yield between batches because
 * embedding runs beside a serve that answers searches meanwhile.
 */
export async function batchedEmbedder(
  id: string,
  batchSize: number,
  embedBatch: (texts: string[]) => Promise<Float32Array[]>,
  close?: () => Promise<void>,
): Promise<Embedder> {
  const [probe] = await embedBatch(["dimensions"]);
  return {
    id,
    dimensions: probe!.length,
    async embed(texts, onProgress) {
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        vectors.push(...(await embedBatch(texts.slice(start, start + batchSize))));
        onProgress?.(vectors.length);
        await new Promise((resolve) => setImmediate(resolve));
      }
      return vectors;
    },
    ...(close ? { close } : {}),
  };
}
