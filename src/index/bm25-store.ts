import type { SearchableType, Tokenizer } from "@orama/orama";

/**
 * What the BM25 index holds (bm25-index.ts): a posting list per word and field of (document, raw
 * term frequency) pairs, each field's lengths, documents added and removed, and the snapshot form
 * (the postings as Int32Arrays, see snapshot-file.ts, so loading is a view on the file, not a
 * rebuild). The scoring's caches (bm25-scoring.ts) live here too and are dropped on every change.
 */
interface Posting {
  /** Internal document ids and their term frequencies; typed arrays after a load, copied on first write. */
  ids: number[] | Int32Array;
  tfs: number[] | Int32Array;
}

export interface FieldIndex {
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

export function createBm25Store(_orama: unknown, _ids: unknown, schema: Record<string, unknown>): Bm25Store {
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

export function insertValue(
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
export function removeValue(
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

export function saveBm25Store(store: Bm25Store): RawStore {
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

export function loadBm25Store(_ids: unknown, raw: unknown): Bm25Store {
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
