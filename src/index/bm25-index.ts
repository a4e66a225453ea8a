import type { AnyIndexStore, IIndex, SearchableType, Tokenizer, TokenScore } from "@orama/orama";
import { index as oramaIndex } from "@orama/orama/components";

/**
 * Orama's index component with textbook BM25 scoring. Orama's own full-text search (3.x) does
 * three things that wreck long natural-language queries over tool descriptions:
 *  - each query word matches every indexed word it is a prefix of ("a" matches "app", "api", …),
 *    and `exact: true` instead demands the whole query as a case-sensitive phrase;
 *  - term frequency is divided by the field length before BM25 divides by it again;
 *  - a word repeated in a document counts as several documents in its document frequency.
 * Here a query word matches that exact word only, tf is the raw count, df counts documents, and
 * the score is Σ over fields and query words of boost·idf·tf·(k1+1)/(tf + k1·(1 − b + b·len/avg)).
 * Storage (radix trees, frequencies, lengths, save/load) stays Orama's.
 */
type Store = oramaIndex.Index;
const defaults = oramaIndex as unknown as IIndex<Store>;

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

function insertTokenScoreParameters(
  index: Store,
  prop: string,
  id: unknown,
  tokens: string[],
  token: string,
): void {
  const internalId = id as number;
  const frequencies = index.frequencies[prop]![internalId]!;
  if (token in frequencies) return; // counted already: Orama calls this once per occurrence
  let count = 0;
  for (const t of tokens) if (t === token) count++;
  frequencies[token] = count;
  const occurrences = index.tokenOccurrences[prop]!;
  occurrences[token] = (occurrences[token] ?? 0) + 1;
}

function remove(
  implementation: IIndex<Store>,
  index: Store,
  prop: string,
  id: unknown,
  internalId: number,
  value: unknown,
  schemaType: SearchableType,
  language: string | undefined,
  tokenizer: Tokenizer,
  docsCount: number,
): boolean {
  if (schemaType !== "string") {
    return defaults.remove(
      implementation,
      index,
      prop,
      id as string,
      internalId,
      value as string,
      schemaType,
      language,
      tokenizer,
      docsCount,
    ) as boolean;
  }
  const tree = index.indexes[prop] as { node: { removeDocumentByWord(word: string, id: number): void } };
  implementation.removeDocumentScoreParameters(index, prop, id as string, docsCount);
  for (const token of new Set(tokenizer.tokenize(value as string, language, prop))) {
    implementation.removeTokenScoreParameters(index, prop, token);
    tree.node.removeDocumentByWord(token, internalId);
  }
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
  _relevance: unknown,
  docsCount: number,
  whereFiltersIDs: Set<number> | undefined,
): TokenScore[] {
  const store = index as Store;
  const queryWeights = new Map<string, number>();
  for (const token of tokenizer.tokenize(term, language))
    queryWeights.set(token, (queryWeights.get(token) ?? 0) + 1);
  const scores = new Map<number, number>();
  for (const prop of propertiesToSearch) {
    const tree = store.indexes[prop] as
      | { node: { find(p: { term: string; exact: boolean }): Record<string, number[]> } }
      | undefined;
    if (!tree) continue;
    const weight = boost[prop] ?? 1;
    const avgLength = store.avgFieldLength[prop] || 1;
    const lengths = store.fieldLengths[prop]!;
    const frequencies = store.frequencies[prop]!;
    const occurrences = store.tokenOccurrences[prop]!;
    for (const [token, queryCount] of queryWeights) {
      const ids = tree.node.find({ term: token, exact: true })[token];
      if (!ids || ids.length === 0) continue;
      const df = occurrences[token] ?? ids.length;
      const idf = Math.log(1 + (docsCount - df + 0.5) / (df + 0.5));
      for (const id of ids) {
        if (whereFiltersIDs && !whereFiltersIDs.has(id)) continue;
        const tf = frequencies[id]?.[token] ?? 0;
        if (tf === 0) continue;
        const norm = 1 - BM25_B + (BM25_B * (lengths[id] ?? avgLength)) / avgLength;
        const score = (idf * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * norm);
        scores.set(id, (scores.get(id) ?? 0) + score * weight * queryCount);
      }
    }
  }
  return [...scores.entries()].sort((a, b) => b[1] - a[1]) as TokenScore[];
}

export const bm25IndexComponent = {
  ...defaults,
  insertTokenScoreParameters,
  remove,
  search,
} as unknown as IIndex<Store>;
