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
  /** The index as it is now (a rebuild replaces it). */
  current(): SearchIndex;
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
}

export async function openCatalogIndex(options: CatalogIndexOptions): Promise<CatalogIndex> {
  const { store, view, tools } = options;
  const snapshotPath = join(options.dataDir, SNAPSHOT_FILE);
  const buildFromCatalog = async (): Promise<SearchIndex> => {
    const built = createSearchIndex();
    await built.add(view.documents(store.listDefinitions()));
    options.logger.debug("rebuilt the search index from the catalog", { tools: tools.size });
    return built;
  };
  const shownCount = () => [...tools.values()].filter((tool) => !view.isHidden(tool)).length;
  const saved = loadSearchIndex(snapshotPath, view.stamp(store.generation()));
  let searchIndex = saved && saved.count() === shownCount() ? saved : await buildFromCatalog();
  let isDirty = searchIndex !== saved && tools.size > 0;
  /** Set while the index may disagree with the catalog: it is then never saved as a snapshot. */
  let isIndexSuspect = false;
  /**
   * The catalog holds the change already. An index that took only part of it must not be searched
   * or saved as it is: a snapshot stamped with the catalog's generation would be loaded at every
   * start, so the tools it missed would stay missing. It is rebuilt from the catalog instead.
   */
  const update = async (removed: readonly string[], added: readonly { id: string; fields: ToolFields }[]) => {
    try {
      isIndexSuspect = true;
      await searchIndex.remove(removed);
      await searchIndex.add(added);
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
    current: () => searchIndex,
    update,
    markChanged: () => {
      isDirty = true;
    },
    async save() {
      if (!isDirty || options.readOnly || isIndexSuspect) return;
      await searchIndex.saveSnapshot(snapshotPath, view.stamp(store.generation()));
      isDirty = false;
    },
  };
}
