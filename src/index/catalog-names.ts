import type { CatalogStore } from "../store/sqlite/catalog-store.ts";
import type { CatalogTool } from "./catalog-types.ts";
import { assignToolNames } from "./tool-naming.ts";
import type { OverrideView } from "./tool-override-view.ts";

/**
 * The catalog's public names: assigned over the whole set of tools (tool-naming.ts: collisions,
 * the length limit, reserved names, a person's renames), stored with the settings they were
 * computed for, recomputed once after a run of changes at the next read, and looked up by name on
 * the call path.
 */
export interface CatalogNames {
  /** The tool with this public name, disabled ones included, as the names were last settled. */
  byName(name: string): CatalogTool | undefined;
  /** Settles the names after changes (and stores them); does nothing when they are current. */
  ensure(): void;
  /** The set of tools or the overrides changed: the names are recomputed at the next `ensure`. */
  markStale(): void;
}

export interface CatalogNamesOptions {
  /** Every tool by key; `ensure` sets their `name`. */
  tools: ReadonlyMap<string, CatalogTool>;
  store: CatalogStore;
  view: OverrideView;
  toolNameLimit: number;
  reservedNames: ReadonlySet<string>;
  /** Names changed and were stored: the search snapshot is behind. */
  onRenamed: () => void;
}

export function createCatalogNames(options: CatalogNamesOptions): CatalogNames {
  const { tools, store, view } = options;
  const byName = new Map<string, CatalogTool>();

  /** Recomputes every public name; returns the tools whose name changed. */
  const renameAll = () => {
    const names = assignToolNames(
      [...tools.values()].map((tool) => ({ ...tool, shownAs: view.nameOf(tool) })),
      options.toolNameLimit,
      options.reservedNames,
    );
    const renamed: CatalogTool[] = [];
    byName.clear();
    for (const tool of tools.values()) {
      const name = names.get(tool.key)!;
      if (name !== tool.name) {
        tool.name = name;
        renamed.push(tool);
      }
      byName.set(name, tool);
    }
    return renamed;
  };
  /**
   * Names depend on the whole set of tools (collisions), so they are recomputed once after a run of
   * changes, at the next read, not after every server: with 2,000 servers syncing one by one,
   * recomputing them per server made indexing quadratic (44 s at 10k tools).
   */
  const namingKey = () =>
    view.stamp(`${options.toolNameLimit}|${[...options.reservedNames].sort().join(",")}`);
  const ensureNames = () => {
    if (!areNamesStale) return;
    areNamesStale = false;
    const renamed = renameAll();
    if (renamed.length > 0) {
      // New tools, or the name limit changed since the last run: store the names (the snapshot is then stale).
      store.apply({ upserts: [], deletes: [], renames: renamed });
      options.onRenamed();
    }
    if (store.namingKey() !== namingKey()) store.setNamingKey(namingKey());
  };
  // The stored names hold when they were computed for these settings and every tool has one
  // (a run that stopped between a sync and the next read leaves new tools unnamed).
  let areNamesStale = store.namingKey() !== namingKey() || hasUnnamed(tools.values());
  if (areNamesStale) ensureNames();
  else for (const tool of tools.values()) byName.set(tool.name, tool);

  return {
    byName: (name) => byName.get(name),
    ensure: ensureNames,
    markStale: () => {
      areNamesStale = true;
    },
  };
}

/** Whether any tool lacks a name: a walk, not a copy of 100,000 tools into an array first. */
function hasUnnamed(tools: Iterable<CatalogTool>): boolean {
  for (const tool of tools) if (!tool.name) return true;
  return false;
}
