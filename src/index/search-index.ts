import { existsSync, readFileSync } from "node:fs";
import { count, create, insertMultiple, load, type Orama, removeMultiple, save, search } from "@orama/orama";
import { writeFileAtomic } from "./atomic-file.ts";
import { bm25IndexComponent } from "./bm25-index.ts";
import { tokenize } from "./tokenizer.ts";
import type { ToolFields } from "./tool-document.ts";

/**
 * The Orama full-text index over tool fields. Orama stays in this folder; callers see ids and
 * scores. It is created with our tokenizer, and snapshots are loaded into an instance created
 * the same way: the persistence plugin's `restore` would bring back Orama's default tokenizer,
 * which does not split camelCase, so queries and documents would stop agreeing.
 */
const SCHEMA = { text: "string", name: "string" } as const;
type ToolIndex = Orama<typeof SCHEMA>;

/** Bump when the schema, the tokenizer, the scoring data or the snapshot layout change: old snapshots are rebuilt. */
export const INDEX_FORMAT_VERSION = 2;

/**
 * BM25 runs over `text`, the whole tool as one document (server, name, description, parameters),
 * plus the tool's name words again at half weight: the name is the most direct statement of what
 * a tool does. Chosen on the retrieval eval (bench/): scoring the four parts as separate fields
 * did worse on every subset (recall@5 0.879 vs 0.920 overall), because BM25 saturates each field
 * on its own and short fields then outweigh the description.
 */
export const FIELD_BOOST: Readonly<Record<keyof typeof SCHEMA, number>> = { text: 1, name: 0.5 };

function documentOf(fields: ToolFields) {
  return {
    text: [fields.server, fields.name, fields.description, fields.params].join("\n"),
    name: fields.name,
  };
}

export interface SearchHit {
  id: string;
  score: number;
}

export interface SearchIndex {
  add(entries: readonly { id: string; fields: ToolFields }[]): Promise<void>;
  remove(ids: readonly string[]): Promise<void>;
  search(query: string, limit: number): Promise<SearchHit[]>;
  count(): number;
  /** Writes the snapshot atomically, stamped with the catalog generation it reflects. */
  saveSnapshot(path: string, generation: number): Promise<void>;
}

interface Snapshot {
  formatVersion: number;
  generation: number;
  data: unknown;
}

function newOrama(): ToolIndex {
  return create({
    schema: SCHEMA,
    components: {
      index: bm25IndexComponent,
      tokenizer: {
        language: "english",
        normalizationCache: new Map(),
        tokenize: (raw: string) => tokenize(raw),
      },
    },
  }) as ToolIndex;
}

function wrap(db: ToolIndex): SearchIndex {
  return {
    async add(entries) {
      if (entries.length === 0) return;
      await insertMultiple(
        db,
        entries.map((entry) => ({ id: entry.id, ...documentOf(entry.fields) })),
        500,
      );
    },
    async remove(ids) {
      if (ids.length === 0) return;
      await removeMultiple(db, [...ids], 500);
    },
    async search(query, limit) {
      if (tokenize(query).length === 0) return [];
      const result = await search(db, {
        term: query,
        properties: ["text", "name"],
        boost: FIELD_BOOST,
        threshold: 1,
        limit,
      });
      return result.hits.map((hit) => ({ id: hit.id, score: hit.score }));
    },
    count: () => count(db),
    async saveSnapshot(path, generation) {
      const snapshot: Snapshot = { formatVersion: INDEX_FORMAT_VERSION, generation, data: save(db) };
      await writeFileAtomic(path, JSON.stringify(snapshot));
    },
  };
}

export function createSearchIndex(): SearchIndex {
  return wrap(newOrama());
}

/**
 * Loads a snapshot when it exists, has this format version and reflects `generation`;
 * otherwise returns undefined and the caller rebuilds from the catalog.
 */
export function loadSearchIndex(path: string, generation: number): SearchIndex | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const snapshot = JSON.parse(readFileSync(path, "utf8")) as Snapshot;
    if (snapshot.formatVersion !== INDEX_FORMAT_VERSION || snapshot.generation !== generation)
      return undefined;
    const db = newOrama();
    load(db, snapshot.data as never);
    return wrap(db);
  } catch {
    return undefined;
  }
}
