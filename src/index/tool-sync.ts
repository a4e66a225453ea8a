import type { Logger } from "../log.ts";
import type { CatalogStore } from "../store/sqlite/catalog-store.ts";
import type { UpstreamTool } from "../upstream-tool.ts";
import type { CatalogIndex } from "./catalog-index.ts";
import type { CatalogNames } from "./catalog-names.ts";
import type { CatalogTool } from "./catalog-types.ts";
import type { ToolApprovals } from "./tool-approvals.ts";
import { hashTool } from "./tool-document.ts";
import { toolKey } from "./tool-naming.ts";
import type { OverrideView } from "./tool-override-view.ts";
import type { ToolOverrides } from "./tool-overrides.ts";
import type { ToolVectors } from "./tool-vectors.ts";

/**
 * How the catalog takes a change: a server's fresh tool list (or servers gone from the config, or a
 * person's overrides replaced) read as tools new, changed, gone and unchanged by their hash, and
 * applied to SQLite, the in-memory maps, the approvals' review, the names, the search index and the
 * vectors, in that order. The catalog (tool-catalog.ts) runs one change at a time.
 */

/** A tool that is new or changed, with the definition it was listed with. */
interface FreshTool extends CatalogTool {
  definition: UpstreamTool;
}

export interface SyncCounts {
  added: number;
  updated: number;
  removed: number;
  unchanged: number;
}

interface CatalogDiff {
  /** Tools that are new or whose hash changed. */
  fresh: FreshTool[];
  gone: CatalogTool[];
  unchanged: number;
}

export interface ToolSync {
  /** Replaces one server's tools with what it listed now; unchanged hashes are not re-indexed. */
  syncServer(server: string, incoming: readonly UpstreamTool[]): Promise<SyncCounts>;
  /** Drops every server not in `keep`. */
  removeServersExcept(keep: ReadonlySet<string>): Promise<SyncCounts>;
  /** Replaces the person's tool overrides; resolves to how many known tools look different now. */
  setOverrides(next: ToolOverrides): Promise<number>;
}

/** What the catalog holds, changed in place. */
export interface ToolSyncState {
  tools: Map<string, CatalogTool>;
  /** Each server's tool keys. */
  toolsOfServer: Map<string, Set<string>>;
  store: CatalogStore;
  view: OverrideView;
  approvals: ToolApprovals | undefined;
  vectors: ToolVectors | undefined;
  names: CatalogNames;
  index: CatalogIndex;
  logger: Logger;
}

export function createToolSync(state: ToolSyncState): ToolSync {
  const { tools, toolsOfServer, store, view, approvals, vectors, names, index } = state;

  /** What a server's fresh tool list changes: new or changed tools, and tools it no longer has. */
  const diffServer = (server: string, incoming: readonly UpstreamTool[]): CatalogDiff => {
    const diff: CatalogDiff = { fresh: [], gone: [], unchanged: 0 };
    const seen = new Set<string>();
    for (const definition of incoming) {
      const ref = { server, tool: definition.name };
      const key = toolKey(ref);
      if (seen.has(key)) {
        state.logger.warn(`server ${server} lists tool ${definition.name} twice; keeping the first`);
        continue;
      }
      seen.add(key);
      const hash = hashTool(definition);
      const existing = tools.get(key);
      if (existing?.hash === hash) diff.unchanged++;
      else diff.fresh.push({ ...ref, key, hash, definition, name: existing?.name ?? "" });
    }
    for (const key of toolsOfServer.get(server) ?? []) if (!seen.has(key)) diff.gone.push(tools.get(key)!);
    return diff;
  };

  const diffRemovedServers = (keep: ReadonlySet<string>): CatalogDiff => ({
    fresh: [],
    gone: [...tools.values()].filter((tool) => !keep.has(tool.server)),
    unchanged: 0,
  });

  /** Applies a diff to the map, the names, SQLite and the search index, in that order. */
  const apply = async ({ fresh, gone, unchanged }: CatalogDiff): Promise<SyncCounts> => {
    const updatedKeys = fresh.filter((tool) => tools.has(tool.key)).map((tool) => tool.key);
    const counts = {
      added: fresh.length - updatedKeys.length,
      updated: updatedKeys.length,
      removed: gone.length,
      unchanged,
    };
    if (fresh.length === 0 && gone.length === 0) return counts;
    // What a changed tool was approved as is kept, so `approve` can show the change.
    for (const key of updatedKeys) store.keepApprovedDefinition(tools.get(key)!.server, tools.get(key)!.tool);
    // The catalog next, before memory: if writing it fails (a full disk), the tools in memory still
    // differ from what the server lists, so the next sync writes them again instead of finding
    // them unchanged. New tools are stored with their previous name or none; names.ensure() settles them.
    store.apply({ upserts: fresh, deletes: gone, renames: [] });
    for (const tool of gone) {
      tools.delete(tool.key);
      toolsOfServer.get(tool.server)?.delete(tool.key);
      vectors?.remove(tool.key);
    }
    for (const { definition: _, ...tool } of fresh) {
      tools.set(tool.key, tool);
      addToServer(toolsOfServer, tool);
    }
    for (const server of new Set(fresh.map((tool) => tool.server))) {
      approvals?.review(
        server,
        fresh.filter((tool) => tool.server === server),
      );
    }
    names.markStale();
    index.markChanged();
    await index.update([...gone.map((tool) => tool.key), ...updatedKeys], view.documents(fresh));
    // After the lexical index has them: search answers at once, and fuses once the vectors arrive.
    vectors?.schedule(view.embeddable(fresh));
    return counts;
  };

  /** The person's overrides changed: the tools they touch are re-indexed and renamed. */
  const applyOverrides = async (next: ToolOverrides): Promise<number> => {
    const changed = view.replace(next);
    if (changed.length === 0) return 0;
    const touched = changed
      .flatMap((ref) => tools.get(toolKey(ref)) ?? [])
      .flatMap((tool) => {
        const definition = store.definitionOf(tool.server, tool.tool);
        return definition ? [{ ...tool, definition }] : [];
      });
    names.markStale();
    index.markChanged();
    if (touched.length === 0) return 0;
    await index.update(
      touched.map((tool) => tool.key),
      view.documents(touched),
    );
    vectors?.schedule(view.embeddable(touched));
    return touched.length;
  };

  return {
    syncServer: async (server, incoming) => apply(diffServer(server, incoming)),
    removeServersExcept: async (keep) => apply(diffRemovedServers(keep)),
    setOverrides: applyOverrides,
  };
}

export function addToServer(toolsOfServer: Map<string, Set<string>>, tool: CatalogTool): void {
  const keys = toolsOfServer.get(tool.server);
  if (keys) keys.add(tool.key);
  else toolsOfServer.set(tool.server, new Set([tool.key]));
}
