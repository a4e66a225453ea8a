import type { SearchHit } from "./search-index.ts";

/**
 * Fuses the lexical and the vector ranking into one: score = (1 − w)·bm25 + w·cosine, where the
 * BM25 score is already the 0–1 share of the query a tool matches and negative cosines count as 0.
 * Both are absolute, so the fused score means the same from one query to the next and a score
 * threshold stays meaningful (min-max normalization per query would always give the top hit 1).
 * Chosen over reciprocal-rank fusion on the retrieval eval; see the README's figures.
 */
export function fuseRankings(
  lexical: readonly SearchHit[],
  similarity: (id: string) => number,
  vectorHits: readonly SearchHit[],
  vectorWeight: number,
  limit: number,
): SearchHit[] {
  const lexicalScore = new Map(lexical.map((hit) => [hit.id, hit.score]));
  const fused = new Map<string, number>();
  for (const id of new Set([...lexical.map((hit) => hit.id), ...vectorHits.map((hit) => hit.id)])) {
    const cosine = Math.max(0, similarity(id));
    fused.set(id, (1 - vectorWeight) * (lexicalScore.get(id) ?? 0) + vectorWeight * cosine);
  }
  return [...fused]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, limit)
    .map(([id, score]) => ({ id, score }));
}
