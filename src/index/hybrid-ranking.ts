import type { SearchHit } from "./search-index.ts";

/** A fused hit with the two scores it was made of, so the caller can judge its relevance. */
export interface FusedHit extends SearchHit {
  lexical: number;
  cosine: number;
}

/**
 * Fuses the lexical and the vector ranking over the union of both candidate lists: each score is
 * min-max normalized over its list, and the fused score is (1 − w)·lexical + w·cosine. The vector
 * side adds candidates the words missed (a paraphrase shares none of the tool's words), and
 * normalizing puts the two scales side by side: raw BM25 shares are small for a long request
 * and cosines of a sentence encoder sit in a narrow band, so the earlier absolute sum
 * (1 − w)·bm25 + w·cosine let one side drown the other and kept most of a model's gain out of the
 * ranking (docs/research/retrieval-lab-notes.md, "How a retrieval change is judged"). A candidate the lexical list lacks counts
 * as its lowest. The fused score is relative to this request's candidates (the best is near 1),
 * so relevance is judged on the raw scores, which each hit carries.
 */
export function fuseRankings(
  lexical: readonly SearchHit[],
  similarity: (id: string) => number,
  vectorHits: readonly SearchHit[],
  vectorWeight: number,
  limit: number,
  /** A seam for bench/experiments/dense-experiment.ts: "max" divides the lexical scores by the best only. */
  lexicalScale: "min-max" | "max" = "min-max",
): FusedHit[] {
  const lexicalScore = new Map(lexical.map((hit) => [hit.id, hit.score]));
  const ids = new Set([...lexical.map((hit) => hit.id), ...vectorHits.map((hit) => hit.id)]);
  const cosines = new Map([...ids].map((id) => [id, similarity(id)]));
  const lexicalNorm = minMax(
    lexical.map((hit) => hit.score),
    lexicalScale === "max",
  );
  const cosineNorm = minMax([...cosines.values()]);
  const fused: FusedHit[] = [...ids].map((id) => {
    const lexicalRaw = lexicalScore.get(id) ?? 0;
    const cosine = cosines.get(id)!;
    const score =
      (1 - vectorWeight) * (lexicalScore.has(id) ? lexicalNorm(lexicalRaw) : 0) +
      vectorWeight * cosineNorm(cosine);
    return { id, score, lexical: lexicalRaw, cosine };
  });
  return fused.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, limit);
}

/** Maps values onto 0–1 by their minimum and maximum; all equal (or one) map to 1. */
function minMax(values: readonly number[], isFromZero = false): (value: number) => number {
  if (values.length === 0) return () => 0;
  let low = isFromZero ? 0 : Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  for (const value of values) {
    if (value < low) low = value;
    if (value > high) high = value;
  }
  const span = high - low;
  return span > 0 ? (value) => (value - low) / span : () => 1;
}
