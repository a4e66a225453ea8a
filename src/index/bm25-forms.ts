import { BM25_K1, type LimitedRelevance, mergedPostingOf, searchedFields } from "./bm25-scoring.ts";
import type { Bm25Store } from "./bm25-store.ts";
import { isStemTerm } from "./tokenizer.ts";
import { selectTopK } from "./top-k.ts";

/**
 * The evidence of one tool for a request, each kind apart, so stems count once (issue 23):
 *  - `exact`: BM25F over the words as written, as a share of the request (0–1, see bm25-scoring.ts);
 *  - `stem`: BM25F over their stems alone, the same way;
 *  - `coverage`: the IDF-weighted share of the request's stems the tool has in any field, however
 *    often: a tool that has the request's rare words outranks one that repeats its common ones.
 * The index pairs every word with its stem (tokenizer.ts, `analyze`); summing both in one score
 * counted a word found as written twice, once more than the re-rank on top of it could undo.
 */
export interface FormScores {
  /** Orama's internal document id. */
  internalId: number;
  exact: number;
  stem: number;
  coverage: number;
}

/** Stem-only matches rank after every exact match among the candidates, by their stem score. */
const STEM_TIEBREAK = 1e-3;

/** The `limit` best documents by their exact-form score (stem-only matches after), with each kind of evidence. */
export function searchByForm(
  store: Bm25Store,
  terms: readonly string[],
  properties: readonly string[],
  boost: Partial<Record<string, number>>,
  relevance: LimitedRelevance,
  docsCount: number,
  limit: number,
): FormScores[] {
  const k1 = relevance.k ?? BM25_K1;
  const { fields, totalWeight } = searchedFields(store, properties, boost, relevance);
  const saturation = totalWeight / (k1 + totalWeight);
  const queryCounts = new Map<string, number>();
  for (const term of terms) queryCounts.set(term, (queryCounts.get(term) ?? 0) + 1);
  // Internal ids are below every field's length table; the scratch is per query (a few arrays of
  // the catalog's size, far less than the postings it walks).
  const size = Math.max(0, ...fields.map(({ field }) => field.lengths.length));
  const exact = new Float64Array(size);
  const stem = new Float64Array(size);
  const coverage = new Float64Array(size);
  const isTouched = new Uint8Array(size);
  const touched: number[] = [];
  let exactMass = 0;
  let stemMass = 0;
  let stemIdf = 0;
  for (const [term, queryCount] of queryCounts) {
    const { ids, frequencies } = mergedPostingOf(store, term, fields);
    const df = ids.length;
    const idf = Math.log(1 + (docsCount - df + 0.5) / (df + 0.5));
    const isStem = isStemTerm(term);
    if (isStem) {
      stemMass += idf * queryCount * saturation;
      stemIdf += idf;
    } else exactMass += idf * queryCount * saturation;
    for (let i = 0; i < df; i++) {
      const id = ids[i]!;
      if (!isTouched[id]) {
        isTouched[id] = 1;
        touched.push(id);
      }
      const tf = frequencies[i]!;
      const score = (idf * queryCount * tf) / (k1 + tf);
      if (isStem) {
        stem[id]! += score;
        coverage[id]! += idf;
      } else exact[id]! += score;
    }
  }
  const share = (value: number, mass: number) => (mass > 0 ? Math.min(1, value / mass) : 0);
  const key = new Float64Array(size);
  for (const id of touched)
    key[id] = share(exact[id]!, exactMass) + STEM_TIEBREAK * share(stem[id]!, stemMass);
  return selectTopK(touched, key, limit).map(([id]) => ({
    internalId: id,
    exact: share(exact[id]!, exactMass),
    stem: share(stem[id]!, stemMass),
    coverage: share(coverage[id]!, stemIdf),
  }));
}
