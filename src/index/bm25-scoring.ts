import type { AnyIndexStore, BM25Params, Tokenizer, TokenScore } from "@orama/orama";
import type { Bm25Store, FieldIndex, MergedPosting } from "./bm25-store.ts";
import { selectTopK } from "./top-k.ts";

/**
 * The scoring half of the BM25 index (bm25-index.ts): BM25F over the postings of bm25-store.ts,
 * with per-field length normalization and weights and one saturation per word; the best `limit`
 * documents, scaled to 0–1 (see `queryMass`). What it works out per word and field (merged
 * postings, length factors) is cached in the store until the index or the weights change.
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** Orama passes `relevance` through to the component; `limit` asks for only the best N documents. */
export interface LimitedRelevance extends BM25Params {
  limit?: number;
  /** Length normalization by field; `b` for the fields not named. */
  fieldB?: Partial<Record<string, number>>;
}

/** Orama's IIndex `search`: the best `relevance.limit` documents for `term`, scored 0–1. */
export function searchBm25F(
  index: AnyIndexStore,
  term: string,
  tokenizer: Tokenizer,
  language: string | undefined,
  propertiesToSearch: string[],
  _exact: boolean,
  _tolerance: number,
  boost: Partial<Record<string, number>>,
  relevance: LimitedRelevance,
  docsCount: number,
  whereFiltersIDs: Set<number> | undefined,
): TokenScore[] {
  const store = index as unknown as Bm25Store;
  const k1 = relevance.k ?? BM25_K1;
  const queryCounts = new Map<string, number>();
  for (const token of tokenizer.tokenize(term, language))
    queryCounts.set(token, (queryCounts.get(token) ?? 0) + 1);

  const { fields, totalWeight } = searchedFields(store, propertiesToSearch, boost, relevance);
  const touched: number[] = [];
  // The score of a document that holds every query word once, at average length, in every field:
  // dividing by it turns BM25F into "how much of the query this tool matches", 0–1. Words no tool
  // has count at full weight, so a query about something absent scores low everywhere.
  let queryMass = 0;
  for (const [token, queryCount] of queryCounts) {
    const merged = mergedPostingOf(store, token, fields);
    const { ids, frequencies } = merged;
    const df = ids.length;
    const idf = Math.log(1 + (docsCount - df + 0.5) / (df + 0.5)) * queryCount;
    queryMass += (idf * totalWeight) / (k1 + totalWeight);
    for (let i = 0; i < df; i++) {
      const id = ids[i]!;
      if (whereFiltersIDs && !whereFiltersIDs.has(id)) continue;
      if (id >= store.scores.length) grow(store, id);
      const tf = frequencies[i]!;
      if (store.scores[id] === 0) touched.push(id);
      store.scores[id]! += (idf * tf) / (k1 + tf);
    }
  }
  const best = selectTopK(touched, store.scores, relevance.limit ?? touched.length);
  for (const id of touched) store.scores[id] = 0;
  for (const hit of best) hit[1] = Math.min(1, hit[1] / queryMass);
  return best;
}

/** A searched field with its weight and length normalization. */
export interface SearchedField {
  prop: string;
  field: FieldIndex;
  weight: number;
  b: number;
}

/** The fields a query searches, with their weights; drops the merged postings when the weights change. */
export function searchedFields(
  store: Bm25Store,
  propertiesToSearch: readonly string[],
  boost: Partial<Record<string, number>>,
  relevance: LimitedRelevance,
): { fields: SearchedField[]; totalWeight: number } {
  const fields = propertiesToSearch.flatMap((prop) => {
    const field = store.fields[prop];
    if (!field || field.docs === 0) return [];
    const weight = boost[prop] ?? 1;
    const b = relevance.fieldB?.[prop] ?? relevance.b ?? BM25_B;
    return [{ prop, field, weight, b }];
  });
  const setting = fields.map(({ prop, weight, b }) => `${prop}:${weight}:${b}`).join(" ");
  if (store.mergedSetting !== setting) {
    store.merged.clear();
    store.mergedSetting = setting;
  }
  return { fields, totalWeight: fields.reduce((sum, { weight }) => sum + weight, 0) };
}

/** One word's BM25F frequencies across the fields, cached until the index or the weights change. */
export function mergedPostingOf(
  store: Bm25Store,
  token: string,
  fields: readonly SearchedField[],
): MergedPosting {
  let merged = store.merged.get(token);
  if (!merged) {
    merged = mergePostings(store, token, fields);
    if (store.merged.size >= MERGED_CACHE_LIMIT) store.merged.clear();
    store.merged.set(token, merged);
  }
  return merged;
}

/** How many words' merged postings are kept (see `Bm25Store.merged`); the cache starts over past it. */
const MERGED_CACHE_LIMIT = 50_000;

/**
 * BM25F's pseudo-frequency of one word in every document that has it: the word's frequency in
 * each field, normalized by that field's length and weighted, summed, to saturate once in the
 * score. A word in the name and the description is stronger evidence than either, but never two
 * independent matches.
 */
function mergePostings(
  store: Bm25Store,
  token: string,
  fields: readonly { field: FieldIndex; weight: number; b: number }[],
): MergedPosting {
  const holders: number[] = [];
  for (const { field, weight, b } of fields) {
    const posting = field.postings.get(token);
    if (!posting) continue;
    const factors = factorsOf(field, weight, b);
    const ids: ArrayLike<number> = posting.ids;
    const tfs: ArrayLike<number> = posting.tfs;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (id >= store.frequencies.length) grow(store, id);
      if (store.frequencies[id] === 0) holders.push(id);
      store.frequencies[id]! += tfs[i]! * factors[id]!;
    }
  }
  const ids = Int32Array.from(holders);
  const frequencies = new Float64Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    frequencies[i] = store.frequencies[ids[i]!]!;
    store.frequencies[ids[i]!] = 0;
  }
  return { ids, frequencies };
}

/** weight / (1 − b + b·length/average) for every internal id of the field, kept until the field changes. */
function factorsOf(field: FieldIndex, weight: number, b: number): Float64Array {
  const key = `${weight}|${b}`;
  if (field.factors && field.factorsKey === key) return field.factors;
  const average = field.totalLength / field.docs || 1;
  const factors = new Float64Array(field.lengths.length);
  for (let id = 0; id < factors.length; id++)
    factors[id] = weight / (1 - b + (b * (field.lengths[id] ?? average)) / average);
  field.factors = factors;
  field.factorsKey = key;
  return factors;
}

/** Makes room for internal id `id` in the per-query scratch arrays. */
function grow(store: Bm25Store, id: number): void {
  const size = Math.max(id + 1, store.scores.length * 2);
  const scores = new Float64Array(size);
  scores.set(store.scores);
  const frequencies = new Float64Array(size);
  frequencies.set(store.frequencies);
  store.scores = scores;
  store.frequencies = frequencies;
}
