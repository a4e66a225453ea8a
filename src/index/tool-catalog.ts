import { rmSync } from "node:fs";
import { join } from "node:path";
import { describeError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { CATALOG_FILE } from "../store/sqlite/catalog-store.ts";
import type { EraStore } from "../store/sqlite/era-store.ts";
import type { InstructionStore } from "../store/sqlite/server-instructions.ts";
import type { UpstreamTool } from "../upstream-tool.ts";
import { type CapabilityApprovals, openCapabilityApprovals } from "./capability-approvals.ts";
import { openOrRebuildStore } from "./catalog-recovery.ts";
import { createCatalogSearch } from "./catalog-search.ts";
import type { CatalogTool, RankedTool, SearchFound } from "./catalog-types.ts";
import type { Embedder } from "./embedders/embedder.ts";
import { createSearchIndex, loadSearchIndex, type SearchIndex } from "./search-index.ts";
import { type ApprovalPolicy, openToolApprovals, type QuarantinedTool } from "./tool-approvals.ts";
import { hashTool, type ToolFields } from "./tool-document.ts";
import { assignToolNames, toolKey } from "./tool-naming.ts";
import { createOverrideView } from "./tool-override-view.ts";
import { NO_OVERRIDES, type ToolOverrides } from "./tool-overrides.ts";
import { openToolVectors } from "./tool-vectors.ts";

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

/**
 * Every known upstream tool with its public name, kept in step across the SQLite catalog (truth),
 * the Orama index (lexical search), the tool vectors when an embedder is set (tool-vectors.ts) and
 * an in-memory map (lookups on the call path).
 * Changes are serialized so servers that connect at the same time cannot interleave.
 */
export interface ToolCatalog {
  /** Set when the catalog file was damaged and a new one was started: what happened, for the user. */
  readonly recovered?: string;
  /** How many tools are indexed. */
  size(): number;
  /** A tool by its public name; a tool a person disabled is not found (see `disabled`). */
  get(publicName: string): CatalogTool | undefined;
  /** A tool a person disabled (tool-overrides.ts), by the public name it would have. */
  disabled(publicName: string): CatalogTool | undefined;
  /** Public names of every tool, or of one server's tools; disabled tools left out. */
  names(server?: string): string[];
  /** Whether the index holds any tool of the server, disabled ones included. */
  hasTools(server: string): boolean;
  /** The tool's definition as an agent sees it: as its server listed it, with a person's overrides. */
  definitionOf(tool: CatalogTool): UpstreamTool | undefined;
  /** The hash of what an agent sees of the tool: its own hash unless a person's override reshapes it. */
  shownHash(tool: CatalogTool): string;
  /**
   * Replaces the person's tool overrides (a config reload): the tools they change are re-indexed
   * and renamed; resolves to how many known tools look different now.
   */
  setOverrides(next: ToolOverrides): Promise<number>;
  /** New or changed since approved, and not approved by the policy: left out of search, refused when called. */
  isQuarantined(tool: CatalogTool): boolean;
  /** Every quarantined tool, with what it was approved as (when it changed) and what the poisoning scan found. */
  quarantined(): QuarantinedTool<CatalogTool>[];
  /** What the poisoning scan found in the tools indexed since opening. */
  findings(): { server: string; tool: string; findings: string[] }[];
  /** Approves these tools as they are now; resolves to how many were approved. */
  approve(tools: readonly CatalogTool[]): number;
  /** Replaces one server's tools with what it listed now; unchanged hashes are not re-indexed. */
  syncServer(server: string, tools: readonly UpstreamTool[]): Promise<SyncCounts>;
  /** Drops every server not in `keep` (servers removed from the config). */
  removeServersExcept(keep: ReadonlySet<string>): Promise<SyncCounts>;
  /** Drops the approvals (and era verdicts) of every server not in `keep`, so that a server added again is a new one. */
  forgetServersExcept(keep: ReadonlySet<string>): void;
  /** Which protocol era each server spoke when last connected (era-store.ts), for the next connect. */
  readonly eras?: EraStore | undefined;
  /** What each server said it is for, kept between runs (server-instructions.ts). */
  readonly instructions?: InstructionStore | undefined;
  /** Pinning of prompts and resource templates, and servers held whole (with an approval policy). */
  readonly capabilities?: CapabilityApprovals | undefined;
  /** Best first, at most `limit`, none scoring below `minScore` (0–1). */
  search(query: string, limit: number, minScore?: number): Promise<RankedTool[]>;
  /**
   * `search`, and the quarantined tools it left out that would have been among the first `limit`
   * had they been approved (so an agent can be told that matching tools wait for a person).
   */
  searchWithHeld(query: string, limit: number, minScore?: number): Promise<SearchFound>;
  /** `searchWithHeld` of several requests at once, in their order (one embedder call for them all). */
  searchAllWithHeld(queries: readonly string[], limit: number, minScore?: number): Promise<SearchFound[]>;
  /**
   * Resolves when every tool has its vector (at once without an embedder); rejects with the
   * embedder's error. Search answers lexically until then (tool-vectors.ts).
   */
  whenEmbedded(): Promise<void>;
  /** Writes the search snapshot if anything changed since the last write. */
  persist(): Promise<void>;
  close(): Promise<void>;
}

export interface ToolCatalogOptions {
  dataDir: string;
  toolNameLimit: number;
  reservedNames: ReadonlySet<string>;
  logger: Logger;
  /** Start from nothing (MCPPROXY_RESET_DATA, index --force). */
  reset?: boolean;
  /**
   * Never write anything (`search`): no reset, no snapshot, names and vectors computed in memory
   * only. A data dir without a catalog reads as an empty one.
   */
  readOnly?: boolean;
  /** With readOnly: approvals are written all the same (`mcpproxy approve`). */
  approvalsWritable?: boolean;
  /** With an embedder the search is hybrid: BM25 and vector similarity fused. */
  embedder?: Embedder | undefined;
  /** The vector share of the fused score, 0–1. */
  vectorWeight?: number;
  /** Called while tools are embedded: done so far, out of total. */
  onEmbedProgress?: (done: number, total: number) => void;
  /** Enforce approvals (tool-approvals.ts) under this policy; without one, every tool may be used. */
  approvalPolicy?: ApprovalPolicy | undefined;
  /** A person's tool overrides (tool-overrides.ts): the public view only, never what is approved. */
  toolOverrides?: ToolOverrides | undefined;
}

export const SNAPSHOT_FILE = "search-index.bin";
/** The JSON snapshot of mcpproxy 0.1, replaced by SNAPSHOT_FILE; removed when found. */
const LEGACY_SNAPSHOT_FILE = "search-index.json";
interface CatalogDiff {
  /** Tools that are new or whose hash changed. */
  fresh: FreshTool[];
  gone: CatalogTool[];
  unchanged: number;
}

export async function openToolCatalog(options: ToolCatalogOptions): Promise<ToolCatalog> {
  const snapshotPath = join(options.dataDir, SNAPSHOT_FILE);
  const readOnly = options.readOnly ?? false;
  if (options.reset && !readOnly) {
    for (const file of [CATALOG_FILE, `${CATALOG_FILE}-wal`, `${CATALOG_FILE}-shm`, SNAPSHOT_FILE]) {
      rmSync(join(options.dataDir, file), { force: true });
    }
    options.logger.info(
      `dropped the saved index in ${options.dataDir} (a reset was asked for); rebuilding it`,
    );
  }
  if (!readOnly) rmSync(join(options.dataDir, LEGACY_SNAPSHOT_FILE), { force: true });
  const { store, recovered } = openOrRebuildStore({
    dataDir: options.dataDir,
    readOnly,
    approvalsWritable: options.approvalsWritable ?? false,
    snapshotFile: SNAPSHOT_FILE,
    logger: options.logger,
  });
  const tools = new Map<string, CatalogTool>();
  for (const stored of store.listTools()) tools.set(toolKey(stored), { ...stored, key: toolKey(stored) });
  const view = createOverrideView(options.toolOverrides ?? NO_OVERRIDES);

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
  const definitionOf = (tool: CatalogTool) => {
    const definition = store.definitionOf(tool.server, tool.tool);
    return definition && view.shown(tool, definition);
  };
  const shownHash = (tool: CatalogTool) => {
    const definition = view.reshapes(tool) ? definitionOf(tool) : undefined;
    return definition ? hashTool(definition) : tool.hash;
  };
  const vectors = options.embedder
    ? openToolVectors(options.embedder, store, tools, options, { hashOf: shownHash, definitionOf })
    : undefined;
  const approvals = options.approvalPolicy
    ? openToolApprovals(store, options.approvalPolicy, options.logger)
    : undefined;
  const capabilities =
    approvals && options.approvalPolicy
      ? openCapabilityApprovals(
          store.capabilities,
          options.approvalPolicy,
          (server) => approvals.hasApprovals(server),
          options.logger,
        )
      : undefined;
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
      isDirty = true;
    }
    if (store.namingKey() !== namingKey()) store.setNamingKey(namingKey());
  };
  // The stored names hold when they were computed for these settings and every tool has one
  // (a run that stopped between a sync and the next read leaves new tools unnamed).
  let areNamesStale = store.namingKey() !== namingKey() || [...tools.values()].some((tool) => !tool.name);
  if (areNamesStale) ensureNames();
  else for (const tool of tools.values()) byName.set(tool.name, tool);
  const toolsOfServer = new Map<string, Set<string>>();
  for (const tool of tools.values()) addToServer(toolsOfServer, tool);

  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };

  /** What a server's fresh tool list changes: new or changed tools, and tools it no longer has. */
  const diffServer = (server: string, incoming: readonly UpstreamTool[]): CatalogDiff => {
    const diff: CatalogDiff = { fresh: [], gone: [], unchanged: 0 };
    const seen = new Set<string>();
    for (const definition of incoming) {
      const ref = { server, tool: definition.name };
      const key = toolKey(ref);
      if (seen.has(key)) {
        options.logger.warn(`server ${server} lists tool ${definition.name} twice; keeping the first`);
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

  /**
   * The catalog holds the change already. An index that took only part of it must not be searched
   * or saved as it is: a snapshot stamped with the catalog's generation would be loaded at every
   * start, so the tools it missed would stay missing. It is rebuilt from the catalog instead.
   */
  const updateIndex = async (removed: string[], added: { id: string; fields: ToolFields }[]) => {
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
    // them unchanged. New tools are stored with their previous name or none; ensureNames() settles them.
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
    areNamesStale = true;
    isDirty = true;
    await updateIndex([...gone.map((tool) => tool.key), ...updatedKeys], view.documents(fresh));
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
    areNamesStale = true;
    isDirty = true;
    if (touched.length === 0) return 0;
    await updateIndex(
      touched.map((tool) => tool.key),
      view.documents(touched),
    );
    vectors?.schedule(view.embeddable(touched));
    return touched.length;
  };

  const { searchAllWithHeld } = createCatalogSearch({
    index: () => searchIndex,
    tools,
    vectors,
    approvals,
    isHidden: (tool) => view.isHidden(tool),
    definitionOf,
    ensureNames,
  });

  return {
    ...(recovered ? { recovered } : {}),
    ...(capabilities ? { capabilities } : {}),
    size: () => tools.size,
    get(publicName) {
      ensureNames();
      const tool = byName.get(publicName);
      return tool && !view.isHidden(tool) ? tool : undefined;
    },
    disabled(publicName) {
      ensureNames();
      const tool = byName.get(publicName);
      return tool && view.isHidden(tool) ? tool : undefined;
    },
    definitionOf,
    shownHash,
    setOverrides: (next) => serialized(() => applyOverrides(next)),
    isQuarantined: (tool) => approvals?.isQuarantined(tool) ?? false,
    quarantined: () => approvals?.quarantinedAmong([...tools.values()]) ?? [],
    approve: (chosen) => approvals?.approveAsTheyAre(chosen) ?? 0,
    findings: () => approvals?.findings() ?? [],
    names(server) {
      ensureNames();
      const keys = server === undefined ? tools.keys() : (toolsOfServer.get(server) ?? []);
      return [...keys].flatMap((key) => {
        const tool = tools.get(key)!;
        return view.isHidden(tool) ? [] : [tool.name];
      });
    },
    hasTools: (server) => (toolsOfServer.get(server)?.size ?? 0) > 0,
    syncServer: (server, incoming) => {
      const unlisted = view.unlisted(server, incoming);
      if (unlisted.length > 0)
        options.logger.warn(
          `${server} does not list ${unlisted.join(", ")}, which its \`tools\`/\`disabledTools\` name; ` +
            "the override waits for the tool",
        );
      return serialized(() => apply(diffServer(server, incoming)));
    },
    removeServersExcept: (keep) => serialized(() => apply(diffRemovedServers(keep))),
    forgetServersExcept(keep) {
      approvals?.forgetServersExcept(keep);
      store.eras.forgetExcept(keep);
      store.instructions.forgetExcept(keep);
    },
    eras: store.eras,
    instructions: store.instructions,
    search: async (query, limit, minScore) => (await searchAllWithHeld([query], limit, minScore))[0]!.hits,
    searchWithHeld: async (query, limit, minScore) => (await searchAllWithHeld([query], limit, minScore))[0]!,
    searchAllWithHeld,
    whenEmbedded: async () => vectors?.whenReady(),
    persist: () =>
      serialized(async () => {
        ensureNames();
        if (!isDirty || readOnly || isIndexSuspect) return;
        await searchIndex.saveSnapshot(snapshotPath, view.stamp(store.generation()));
        isDirty = false;
      }),
    close: async () => {
      await vectors?.stop();
      store.close();
      await options.embedder?.close?.();
    },
  };
}

function addToServer(toolsOfServer: Map<string, Set<string>>, tool: CatalogTool): void {
  const keys = toolsOfServer.get(tool.server);
  if (keys) keys.add(tool.key);
  else toolsOfServer.set(tool.server, new Set([tool.key]));
}
