import { selectTopK } from "./top-k.ts";

/**
 * Tool vectors in one contiguous Float32Array (row i = slot i), searched by brute-force dot
 * product: the vectors are unit length, so that is cosine similarity. At 10k tools × 384
 * dimensions a query is one pass over 15 MB, a few milliseconds, with no approximate index to
 * keep in step. Removed rows are recycled.
 */
interface VectorHit {
  id: string;
  score: number;
}

export interface VectorIndex {
  readonly dimensions: number;
  size(): number;
  has(id: string): boolean;
  set(id: string, vector: Float32Array): void;
  delete(id: string): void;
  /** Cosine similarity of one tool to the query; 0 for a tool without a vector. */
  similarity(id: string, query: Float32Array): number;
  search(query: Float32Array, limit: number): VectorHit[];
}

export function createVectorIndex(dimensions: number): VectorIndex {
  let matrix = new Float32Array(dimensions * 256);
  const slotOf = new Map<string, number>();
  const idOf: (string | undefined)[] = [];
  const free: number[] = [];
  let scores = new Float64Array(256);
  const dot = (slot: number, query: Float32Array) => {
    let sum = 0;
    const base = slot * dimensions;
    for (let d = 0; d < dimensions; d++) sum += matrix[base + d]! * query[d]!;
    return sum;
  };

  return {
    dimensions,
    size: () => slotOf.size,
    has: (id) => slotOf.has(id),
    set(id, vector) {
      if (vector.length !== dimensions) {
        throw new Error(`vector for ${id} has ${vector.length} dimensions, the index has ${dimensions}`);
      }
      let slot = slotOf.get(id);
      if (slot === undefined) {
        slot = free.pop() ?? idOf.length;
        if ((slot + 1) * dimensions > matrix.length) {
          const grown = new Float32Array(Math.max((slot + 1) * dimensions, matrix.length * 2));
          grown.set(matrix);
          matrix = grown;
        }
        slotOf.set(id, slot);
        idOf[slot] = id;
      }
      matrix.set(vector, slot * dimensions);
    },
    delete(id) {
      const slot = slotOf.get(id);
      if (slot === undefined) return;
      slotOf.delete(id);
      idOf[slot] = undefined;
      free.push(slot);
    },
    similarity(id, query) {
      const slot = slotOf.get(id);
      return slot === undefined ? 0 : dot(slot, query);
    },
    search(query, limit) {
      if (query.length !== dimensions) {
        throw new Error(`query vector has ${query.length} dimensions, the index has ${dimensions}`);
      }
      if (scores.length < idOf.length) scores = new Float64Array(idOf.length);
      const live: number[] = [];
      for (let slot = 0; slot < idOf.length; slot++) {
        if (idOf[slot] === undefined) continue;
        scores[slot] = dot(slot, query);
        live.push(slot);
      }
      return selectTopK(live, scores, limit).map(([slot, score]) => ({ id: idOf[slot]!, score }));
    },
  };
}
