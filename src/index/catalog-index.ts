import { join } from "node:path";
import { describeError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { CatalogStore } from "../store/sqlite/catalog-store.ts";
import type { CatalogTool } from "./catalog-types.ts";
import { createSearchIndex, loadSearchIndex, type SearchIndex } from "./search-index.ts";
import type { ToolFields } from "./tool-document.ts";
import type { OverrideView } from "./tool-override-view.ts";

/**
 * The catalog's search index (search-index.ts) kept in step with the SQLite catalog, which is the
 * truth, and saved between runs: loaded from its snapshot file when that was written at the
 * catalog's generation (and the person's overrides) and holds every shown tool, else rebuilt from
 * the catalog; updated with each change, and rebuilt when an update fails part-way; written back
 * only when it changed and agrees with the catalog. The catalog (tool-catalog.ts) says when.
 */

export const SNAPSHOT_FILE = "search-index.bin";

export interface CatalogIndex {
  /** The index as it is now (a rebuild replaces it), once it is loaded: the first ask loads it. */
  current(): Promise<SearchIndex>;
  /** Loads the index now if it is not yet (a serve, once it has answered its first request). */
  load(): Promise<void>;
  /** Takes a change the catalog holds already: these ids out, these documents in. */
  update(removed: readonly string[], added: readonly { id: string; fields: ToolFields }[]): Promise<void>;
  /** The catalog changed (tools, names, overrides): the snapshot on disk is behind. */
  markChanged(): void;
  /** Writes the snapshot if anything changed since the last write. */
  save(): Promise<void>;
}

export interface CatalogIndexOptions {
  dataDir: string;
  /** Never write the snapshot (`search`). */
  readOnly: boolean;
  store: CatalogStore;
  view: OverrideView;
  tools: ReadonlyMap<string, CatalogTool>;
  logger: Logger;
  /**
   * Read the snapshot when the index is first needed (or `load`), not at open: a serve answers its
   * client's first requests without waiting for it (0.3–0.7 s at 100,000 tools). A search or a
   * change that comes first waits for the load, and the index is the one an open would have read.
   */
  deferLoad?: boolean | undefined;
}

export async function openCatalogIndex(options: CatalogIndexOptions): Promise<CatalogIndex> {
  const { store, view, tools } = options;
  const snapshotPath = join(options.dataDir, SNAPSHOT_FILE);
  /** The catalog's generation the last build from it read (the changes written by then are in it). */
  let builtGeneration: number | undefined;
  const buildFromCatalog = async (): Promise<SearchIndex> => {
    const built = createSearchIndex();
    builtGeneration = store.generation();
    await built.add(view.documents(store.listDefinitions()));
    options.logger.debug("rebuilt the search index from the catalog", { tools: tools.size });
    return built;
  };
  const shownCount = () => {
    // Counted in a walk: an array of every tool first cost each start at 100,000 tools.
    let shown = 0;
    for (const tool of tools.values()) if (!view.isHidden(tool)) shown++;
    return shown;
  };
  // What the snapshot must match, taken now: changes made before a deferred load reach the index
  // through `update`, which waits for the load, so it starts from the catalog as it was at open.
  const stamp = view.stamp(store.generation());
  const shown = shownCount();
  let isDirty = false;
  const loadOrBuild = async (): Promise<SearchIndex> => {
    const saved = loadSearchIndex(snapshotPath, stamp);
    if (saved && saved.count() === shown) return saved;
    if (tools.size > 0) isDirty = true;
    return buildFromCatalog();
  };
  let searchIndex: SearchIndex | undefined;
  let loading: Promise<SearchIndex> | undefined;
  const current = (): Promise<SearchIndex> => {
    if (searchIndex) return Promise.resolve(searchIndex);
    loading ??= loadOrBuild().then(
      (loaded) => {
        searchIndex ??= loaded;
        return searchIndex;
      },
      (error: unknown) => {
        loading = undefined; // the next ask tries again
        throw error;
      },
    );
    return loading;
  };
  if (!options.deferLoad) await current();
  /** Set while the index may disagree with the catalog: it is then never saved as a snapshot. */
  let isIndexSuspect = false;
  /**
   * The catalog holds the change already. An index that took only part of it must not be searched
   * or saved as it is: a snapshot stamped with the catalog's generation would be loaded at every
   * start, so the tools it missed would stay missing. It is rebuilt from the catalog instead.
   */
  const update = async (removed: readonly string[], added: readonly { id: string; fields: ToolFields }[]) => {
    // The catalog holds this change already: an index built from it since (a deferred load that
    // found no snapshot) may hold the added tools too, so they are replaced, not added twice.
    const generation = store.generation();
    try {
      const index = await current();
      isIndexSuspect = true;
      const isBuiltSince = builtGeneration !== undefined && builtGeneration >= generation;
      await index.remove(
        isBuiltSince ? [...new Set([...removed, ...added.map((entry) => entry.id)])] : removed,
      );
      await index.add(added);
      isIndexSuspect = false;
    } catch (error) {
      options.logger.warn(
        `updating the search index failed (${describeError(error)}); rebuilding it from the catalog`,
      );
      searchIndex = await buildFromCatalog();
      isIndexSuspect = false;
    }
  };

  return {
    current,
    load: async () => {
      await current();
    },
    update,
    markChanged: () => {
      isDirty = true;
    },
    async save() {
      if (!isDirty || options.readOnly || isIndexSuspect) return;
      const index = await current();
      await index.saveSnapshot(snapshotPath, view.stamp(store.generation()));
      isDirty = false;
    },
  };
}
