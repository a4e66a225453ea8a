import type { IIndex } from "@orama/orama";
import { searchBm25F } from "./bm25-scoring.ts";
import {
  type Bm25Store,
  createBm25Store,
  insertValue,
  loadBm25Store,
  removeValue,
  saveBm25Store,
} from "./bm25-store.ts";

/**
 * An Orama index component for full-text search over tool documents: BM25F (per-field length
 * normalization and weights, one saturation per word; bm25-scoring.ts) on compact postings
 * (bm25-store.ts), written for long natural-language queries over a few thousand to tens of
 * thousands of tools. Orama's own component (3.x) is far off for this load:
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
const unsupported = (what: string) => () => {
  throw new Error(`the BM25 index does not support ${what}`);
};

/** Orama's IIndex, implemented for string properties; the score-parameter hooks are folded into insert/remove. */
export const bm25IndexComponent = {
  create: createBm25Store,
  insert: insertValue,
  remove: removeValue,
  insertDocumentScoreParameters: () => undefined,
  insertTokenScoreParameters: () => undefined,
  removeDocumentScoreParameters: () => undefined,
  removeTokenScoreParameters: () => undefined,
  calculateResultScores: unsupported("calculateResultScores"),
  search: searchBm25F,
  searchByWhereClause: unsupported("where filters"),
  getSearchableProperties: (store: Bm25Store) => Object.keys(store.types),
  getSearchablePropertiesWithTypes: (store: Bm25Store) => store.types,
  load: loadBm25Store,
  save: saveBm25Store,
} as unknown as IIndex<Bm25Store>;
