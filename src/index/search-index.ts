import { existsSync, readFileSync } from "node:fs";
import {
  type AnyDocument,
  count,
  create,
  type IDocumentsStore,
  insertMultiple,
  load,
  type Orama,
  remove,
  save,
  search,
} from "@orama/orama";
import { internalDocumentIDStore as idStore } from "@orama/orama/components";
import { writeFileAtomic } from "../atomic-file.ts";
import { searchByForm } from "./bm25-forms.ts";
import { bm25IndexComponent } from "./bm25-index.ts";
import { BM25_B, BM25_K1, type LimitedRelevance } from "./bm25-scoring.ts";
import type { Bm25Store } from "./bm25-store.ts";
import { decodeSnapshot, encodeSnapshot } from "./snapshot-file.ts";
import { analyze } from "./tokenizer.ts";
import type { ToolFields } from "./tool-document.ts";

/**
 * The Orama full-text index over tool fields. Orama stays in this folder; callers see ids and
 * scores. It is created with our tokenizer, index and document store, and snapshots are loaded
 * into an instance created the same way: the persistence plugin's `restore` would bring back
 * Orama's default components, so queries and documents would stop agreeing.
 */
const SCHEMA = { server: "string", name: "string", description: "string", params: "string" } as const;
type ToolIndex = Orama<typeof SCHEMA>;
type Field = keyof typeof SCHEMA;
const FIELDS = Object.keys(SCHEMA) as Field[];

/** Bump when the schema, the tokenizer, the scoring data or the snapshot layout change: old snapshots are rebuilt. */
const INDEX_FORMAT_VERSION = 6;

/**
 * BM25F over the tool's fields (bm25-scoring.ts): the name states what a tool does most directly,
 * and parameters, often shared by every tool of a vendor (`tenant`, `subscription`, `retry_*`),
 * say least about which of them is meant, so they weigh little and cannot drown the name.
 * Short fields (server, name) are normalized less by length than prose.
 * On the retrieval eval (bench/retrieval-experiment.ts) this scored recall@1 +0.009 [+0.000,
 * +0.017] and MRR +0.005 [+0.000, +0.010] over one BM25 document plus the name at half weight,
 * +0.017 recall@1 on single-tool requests, and cost no subset beyond its interval. Summing
 * separate per-field BM25 scores instead did worse on every subset, because each field then
 * saturates on its own and short fields outweigh the description.
 */
export const FIELD_BOOST: Readonly<Record<Field, number>> = {
  server: 1,
  name: 3,
  description: 1,
  params: 0.3,
};
export const FIELD_B: Readonly<Record<Field, number>> = {
  server: 0.5,
  name: 0.5,
  description: 0.75,
  params: 0.75,
};

function documentOf(fields: ToolFields): Record<Field, string> {
  return { server: fields.server, name: fields.name, description: fields.description, params: fields.params };
}

/**
 * Keeps no document text: the catalog (SQLite) holds the tools, and the BM25 component removes a
 * document by the words it recorded. Every stored document is this placeholder, whose empty
 * properties make Orama's `remove` still call the index for each property.
 */
const PLACEHOLDER: AnyDocument = Object.freeze({ server: "", name: "", description: "", params: "" });
interface TextFreeStore {
  shared: idStore.InternalDocumentIDStore;
  ids: Set<number>;
}
const internalIdOf = (store: TextFreeStore, id: unknown) =>
  idStore.getInternalDocumentId(store.shared, id as string | number);
const textFreeDocumentsStore = {
  create: (_orama: unknown, shared: idStore.InternalDocumentIDStore): TextFreeStore => ({
    shared,
    ids: new Set(),
  }),
  get: (store: TextFreeStore, id: unknown) =>
    store.ids.has(internalIdOf(store, id)) ? PLACEHOLDER : undefined,
  getMultiple: (store: TextFreeStore, ids: unknown[]) =>
    ids.map((id) => (store.ids.has(internalIdOf(store, id)) ? PLACEHOLDER : undefined)),
  getAll: (store: TextFreeStore) => Object.fromEntries([...store.ids].map((id) => [id, PLACEHOLDER])),
  store(store: TextFreeStore, _id: unknown, internalId: number) {
    if (store.ids.has(internalId)) return false;
    store.ids.add(internalId);
    return true;
  },
  remove: (store: TextFreeStore, id: unknown) => store.ids.delete(internalIdOf(store, id)),
  count: (store: TextFreeStore) => store.ids.size,
  load: (shared: idStore.InternalDocumentIDStore, raw: unknown): TextFreeStore => ({
    shared,
    ids: new Set(raw as number[]),
  }),
  save: (store: TextFreeStore) => [...store.ids],
};

export interface SearchHit {
  id: string;
  score: number;
}

/** A hit with each kind of lexical evidence apart (bm25-forms.ts): words as written, stems, coverage. */
export interface FormHit {
  id: string;
  exact: number;
  stem: number;
  coverage: number;
}

export interface SearchIndex {
  /** The best `limit` tools by BM25F over every index term (words and their stems together). */
  search(query: string, limit: number): Promise<SearchHit[]>;
  /**
   * The best `limit` tools by BM25F over the words as written, with their stem and coverage
   * evidence. Not called by the proxy: the seam of bench/experiments/stem-sibling-experiment.ts,
   * which measured ranking by each kind of evidence apart (issue 23; dropped, docs/research) and
   * must be able to run again on the index as it is.
   */
  searchByForm(query: string, limit: number): FormHit[];
  add(entries: readonly { id: string; fields: ToolFields }[]): Promise<void>;
  remove(ids: readonly string[]): Promise<void>;
  count(): number;
  /** Writes the snapshot atomically, stamped with the catalog generation it reflects. */
  saveSnapshot(path: string, generation: number | string): Promise<void>;
}

interface Snapshot {
  formatVersion: number;
  /** The catalog generation, with the tool overrides' fingerprint when there are any. */
  generation: number | string;
  data: unknown;
}

/** How text becomes index terms; the same for documents and queries. A seam for bench/retrieval-experiment.ts. */
export type Analyzer = (text: string) => string[];

function newOrama(analyzer: Analyzer = analyze): ToolIndex {
  return create({
    schema: SCHEMA,
    // Results are ordered by score only. Orama's sorter would keep a copy of every document's text
    // to sort by (4 MB of the 10k-tool snapshot, and as much again in memory).
    sort: { enabled: false },
    components: {
      index: bm25IndexComponent,
      documentsStore: textFreeDocumentsStore as unknown as IDocumentsStore,
      tokenizer: {
        language: "english",
        normalizationCache: new Map(),
        tokenize: (raw: string) => analyzer(raw),
      },
    },
  }) as unknown as ToolIndex;
}

const RELEVANCE: LimitedRelevance = { k: BM25_K1, b: BM25_B, d: 0.5, fieldB: FIELD_B };

function wrap(db: ToolIndex, analyzer: Analyzer = analyze): SearchIndex {
  return {
    async add(entries) {
      if (entries.length === 0) return;
      // Complete when it returns: with a synchronous index component every batch runs in this call.
      await insertMultiple(
        db,
        entries.map((entry) => ({ id: entry.id, ...documentOf(entry.fields) })),
        500,
      );
    },
    async remove(ids) {
      // One by one, not removeMultiple: that returns after its first batch and removes the rest on
      // later timers, so re-inserting a server's 501st changed tool failed ("already exists") and
      // the tools after it vanished from search when the late batches ran.
      for (const id of ids) await remove(db, id);
    },
    async search(query, limit) {
      if (limit <= 0) return []; // a query of stop words alone matches nothing in the component
      const relevance: LimitedRelevance = { ...RELEVANCE, limit };
      const result = await search(db, {
        term: query,
        properties: FIELDS,
        boost: FIELD_BOOST,
        relevance,
        threshold: 1,
        limit,
      });
      return result.hits.map((hit) => ({ id: hit.id, score: hit.score }));
    },
    searchByForm(query, limit) {
      if (limit <= 0) return [];
      const store = db.data.index as unknown as Bm25Store;
      const hits = searchByForm(store, analyzer(query), FIELDS, FIELD_BOOST, RELEVANCE, count(db), limit);
      return hits.map(({ internalId, ...evidence }) => ({
        id: idStore.getDocumentIdFromInternalId(db.internalDocumentIDStore, internalId),
        ...evidence,
      }));
    },
    count: () => count(db),
    async saveSnapshot(path, generation) {
      const snapshot: Snapshot = { formatVersion: INDEX_FORMAT_VERSION, generation, data: save(db) };
      await writeFileAtomic(path, encodeSnapshot(snapshot));
    },
  };
}

export function createSearchIndex(analyzer?: Analyzer): SearchIndex {
  return wrap(newOrama(analyzer), analyzer);
}

/**
 * Loads a snapshot when it exists, has this format version and reflects `generation`;
 * otherwise returns undefined and the caller rebuilds from the catalog.
 */
export function loadSearchIndex(path: string, generation: number | string): SearchIndex | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const snapshot = decodeSnapshot(readFileSync(path)) as Snapshot;
    if (snapshot.formatVersion !== INDEX_FORMAT_VERSION || snapshot.generation !== generation)
      return undefined;
    const db = newOrama();
    load(db, snapshot.data as never);
    return wrap(db);
  } catch {
    return undefined;
  }
}
