import type { AnyIndexStore, BM25Params, IIndex, SearchableType, Tokenizer, TokenScore } from "@orama/orama";
import { selectTopK } from "./top-k.ts";

/**
 * An Orama index component for full-text search over tool documents: BM25F (per-field length
 * normalization and weights, one saturation per word; see `search`) on compact postings, written for long natural-language queries over a few thousand to tens of thousands of
 * tools. Orama's own component (3.x) is far off for this load:
 *  - each query word matches every indexed word it is a prefix of ("a" matches "app", "api", …),
 *    and `exact: true` instead demands the whole query as a case-sensitive phrase;
 *  - term frequency is divided by the field length before BM25 divides by it again, and a word
 *    repeated in a document counts as several documents in its document frequency;
 *  - its radix trees and per-document frequency objects cost several hundred MB at 10k tools,
 *    load slowly from a snapshot, and `search()` then sorts every matching document.
 * Here a posting list per word and field holds (document, raw term frequency) pairs; a query word
 * matches that exact word; scores accumulate in a typed array and only the best `limit`
 * documents are returned (see `LimitedRelevance`), with scores scaled to 0–1 (see `queryMass`).
 * Snapshots hold the postings as Int32Arrays (see snapshot-file.ts), so loading is a view on the
 * file, not a rebuild.
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** Orama passes `relevance` through to the component; `limit` asks for only the best N documents. */
export interface LimitedRelevance extends BM25Params {
  limit?: number;
  /** Length normalization by field; `b` for the fields not named. */
  fieldB?: Partial<Record<string, number>>;
}

interface Posting {
  /** Internal document ids and their term frequencies; typed arrays after a load, copied on first write. */
  ids: number[] | Int32Array;
  tfs: number[] | Int32Array;
}

interface FieldIndex {
  postings: Map<string, Posting>;
  /** Token count per internal document id (0 when absent). */
  lengths: number[];
  totalLength: number;
  docs: number;
  /** Words of each document, built on the first removal only (removals are rare). */
  docTerms?: Map<number, string[]>;
  /** weight / length normalization by internal id, for the `factorsKey` they were computed with; dropped on every change. */
  factors?: Float64Array;
  factorsKey?: string;
}

export interface Bm25Store {
  /** Orama's search reads this; tools carry no vectors here (see vector-index.ts). */
  vectorIndexes: Record<string, never>;
  fields: Record<string, FieldIndex>;
  types: Record<string, SearchableType>;
  /** Per-query scratch, zeroed after each query: the score and one word's BM25F frequency by internal id. */
  scores: Float64Array;
  frequencies: Float64Array;
  /**
   * Each queried word's BM25F frequencies across the fields (see `mergePostings`), for the field
   * weights in `mergedSetting`; emptied on every change. Merging the fields' postings per query
   * made search twice as slow as one document per tool; a word's merged posting is as long as that.
   */
  merged: Map<string, MergedPosting>;
  mergedSetting?: string;
}

export interface MergedPosting {
  ids: Int32Array;
  frequencies: Float64Array;
}

interface RawField {
  terms: string[];
  /** For each term in order: its count n, then n ids, then n term frequencies. */
  postings: Int32Array;
  /** Token count by internal id. */
  lengths: Int32Array;
  totalLength: number;
  docs: number;
}

interface RawStore {
  types: Record<string, SearchableType>;
  fields: Record<string, RawField>;
}

function newField(): FieldIndex {
  return { postings: new Map(), lengths: [], totalLength: 0, docs: 0 };
}

function create(_orama: unknown, _ids: unknown, schema: Record<string, unknown>): Bm25Store {
  const store: Bm25Store = {
    vectorIndexes: {},
    fields: {},
    types: {},
    scores: new Float64Array(1024),
    frequencies: new Float64Array(1024),
    merged: new Map(),
  };
  for (const [prop, type] of Object.entries(schema)) {
    if (type !== "string")
      throw new Error(`the BM25 index supports string properties only, not ${prop}: ${type}`);
    store.types[prop] = "string";
    store.fields[prop] = newField();
  }
  return store;
}

function writable(posting: Posting): { ids: number[]; tfs: number[] } {
  if (!Array.isArray(posting.ids)) posting.ids = Array.from(posting.ids);
  if (!Array.isArray(posting.tfs)) posting.tfs = Array.from(posting.tfs);
  return posting as { ids: number[]; tfs: number[] };
}

function insert(
  _implementation: unknown,
  store: Bm25Store,
  prop: string,
  _id: unknown,
  internalId: number,
  value: unknown,
  _schemaType: SearchableType,
  language: string | undefined,
  tokenizer: Tokenizer,
): void {
  const field = store.fields[prop]!;
  const tokens = tokenizer.tokenize(value as string, language, prop);
  const counts = new Map<string, number>();
  for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
  for (const [term, tf] of counts) {
    let posting = field.postings.get(term);
    if (!posting) {
      posting = { ids: [], tfs: [] };
      field.postings.set(term, posting);
    }
    const list = writable(posting);
    list.ids.push(internalId);
    list.tfs.push(tf);
  }
  field.lengths[internalId] = tokens.length;
  field.totalLength += tokens.length;
  field.docs++;
  field.factors = undefined;
  store.merged.clear();
  field.docTerms?.set(internalId, [...counts.keys()]);
}

function docTermsOf(field: FieldIndex): Map<number, string[]> {
  if (field.docTerms) return field.docTerms;
  const docTerms = new Map<number, string[]>();
  for (const [term, posting] of field.postings) {
    for (const id of posting.ids) {
      const terms = docTerms.get(id);
      if (terms) terms.push(term);
      else docTerms.set(id, [term]);
    }
  }
  field.docTerms = docTerms;
  return docTerms;
}

/** The stored document holds no text, so the words to remove come from the index itself. */
function remove(
  _implementation: unknown,
  store: Bm25Store,
  prop: string,
  _id: unknown,
  internalId: number,
): boolean {
  const field = store.fields[prop]!;
  const docTerms = docTermsOf(field);
  const terms = docTerms.get(internalId);
  if (!terms) return false;
  for (const term of terms) {
    const posting = field.postings.get(term);
    if (!posting) continue;
    const list = writable(posting);
    const at = list.ids.indexOf(internalId);
    if (at < 0) continue;
    list.ids.splice(at, 1);
    list.tfs.splice(at, 1);
    if (list.ids.length === 0) field.postings.delete(term);
  }
  docTerms.delete(internalId);
  field.totalLength -= field.lengths[internalId] ?? 0;
  field.lengths[internalId] = 0;
  field.docs--;
  field.factors = undefined;
  store.merged.clear();
  return true;
}

function search(
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

function save(store: Bm25Store): RawStore {
  const fields: Record<string, RawField> = {};
  for (const [prop, field] of Object.entries(store.fields)) {
    const terms = [...field.postings.keys()];
    let size = 0;
    for (const posting of field.postings.values()) size += 1 + 2 * posting.ids.length;
    const postings = new Int32Array(size);
    let at = 0;
    for (const term of terms) {
      const { ids, tfs } = field.postings.get(term)!;
      postings[at++] = ids.length;
      postings.set(ids, at);
      postings.set(tfs, at + ids.length);
      at += 2 * ids.length;
    }
    const lengths = Int32Array.from({ length: field.lengths.length }, (_, id) => field.lengths[id] ?? 0);
    fields[prop] = {
      terms,
      postings,
      lengths,
      totalLength: field.totalLength,
      docs: field.docs,
    };
  }
  return { types: store.types, fields };
}

function load(_ids: unknown, raw: unknown): Bm25Store {
  const { types, fields } = raw as RawStore;
  const store: Bm25Store = {
    vectorIndexes: {},
    fields: {},
    types,
    scores: new Float64Array(1024),
    frequencies: new Float64Array(1024),
    merged: new Map(),
  };
  for (const [prop, rawField] of Object.entries(fields)) {
    const field = newField();
    const flat = rawField.postings;
    let at = 0;
    for (const term of rawField.terms) {
      const n = flat[at]!;
      field.postings.set(term, {
        ids: flat.subarray(at + 1, at + 1 + n),
        tfs: flat.subarray(at + 1 + n, at + 1 + 2 * n),
      });
      at += 1 + 2 * n;
    }
    field.lengths = Array.from(rawField.lengths);
    field.totalLength = rawField.totalLength;
    field.docs = rawField.docs;
    store.fields[prop] = field;
  }
  return store;
}

const unsupported = (what: string) => () => {
  throw new Error(`the BM25 index does not support ${what}`);
};

/** Orama's IIndex, implemented for string properties; the score-parameter hooks are folded into insert/remove. */
export const bm25IndexComponent = {
  create,
  insert,
  remove,
  insertDocumentScoreParameters: () => undefined,
  insertTokenScoreParameters: () => undefined,
  removeDocumentScoreParameters: () => undefined,
  removeTokenScoreParameters: () => undefined,
  calculateResultScores: unsupported("calculateResultScores"),
  search,
  searchByWhereClause: unsupported("where filters"),
  getSearchableProperties: (store: Bm25Store) => Object.keys(store.types),
  getSearchablePropertiesWithTypes: (store: Bm25Store) => store.types,
  load,
  save,
} as unknown as IIndex<Bm25Store>;
