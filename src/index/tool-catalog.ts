import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../log.ts";
import { CATALOG_FILE } from "../store/sqlite/catalog-store.ts";
import type { EraStore } from "../store/sqlite/era-store.ts";
import type { InstructionStore } from "../store/sqlite/server-instructions.ts";
import type { UpstreamTool } from "../upstream-tool.ts";
import { type CapabilityApprovals, openCapabilityApprovals } from "./capability-approvals.ts";
import { openCatalogIndex, SNAPSHOT_FILE } from "./catalog-index.ts";
import { createCatalogNames } from "./catalog-names.ts";
import { openOrRebuildStore } from "./catalog-recovery.ts";
import { createCatalogSearch, FALLBACK_WAIT_TOOLS } from "./catalog-search.ts";
import type { CatalogTool, RankedTool, SearchFound } from "./catalog-types.ts";
import type { Embedder } from "./embedders/embedder.ts";
import { type ApprovalPolicy, openToolApprovals, type QuarantinedTool } from "./tool-approvals.ts";
import { hashTool } from "./tool-document.ts";
import { toolKey } from "./tool-naming.ts";
import { createOverrideView } from "./tool-override-view.ts";
import { NO_OVERRIDES, type ToolOverrides } from "./tool-overrides.ts";
import { addToServer, createToolSync, type SyncCounts } from "./tool-sync.ts";
import { openToolVectors } from "./tool-vectors.ts";

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
  /**
   * Moves whenever what the catalog shows may have changed: its tools, names and overrides, the
   * approvals (re-read once another process gave some), the servers' instructions (written here or
   * by another process). Cheap (a counter and a pragma), so a watcher can look at it every second
   * and read the catalog only when it moved.
   */
  version(): string;
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
   * Resolves when every tool has its vector (at once without an embedder, or with `fallback`
   * before a request needed them, unless `start`: then they are embedded now, as `index` does);
   * rejects with the embedder's error. Search answers lexically until then (tool-vectors.ts).
   */
  whenEmbedded(options?: { start?: boolean }): Promise<void>;
  /** Writes the search snapshot if anything changed since the last write. */
  persist(): Promise<void>;
  /** Reads the search index now if it was deferred (`deferIndex`); at once if it is loaded. */
  loadIndex(): Promise<void>;
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
  /**
   * With an embedder: fuse every search (`always`, the default; `hybrid` search), or only a text
   * whose lexical ranking is weak, embedding the tools when one first is (`fallback`; `auto`).
   */
  vectorUse?: "always" | "fallback" | undefined;
  /**
   * In `fallback`, a request that first needs the vectors waits for at most this many tools to be
   * embedded (FALLBACK_WAIT_TOOLS; Infinity for the commands that answer once and exit).
   */
  fallbackWait?: number | undefined;
  /** The vector share of the fused score, 0–1. */
  vectorWeight?: number;
  /** Called while tools are embedded: done so far, out of total. */
  onEmbedProgress?: (done: number, total: number) => void;
  /** Enforce approvals (tool-approvals.ts) under this policy; without one, every tool may be used. */
  approvalPolicy?: ApprovalPolicy | undefined;
  /** A person's tool overrides (tool-overrides.ts): the public view only, never what is approved. */
  toolOverrides?: ToolOverrides | undefined;
  /**
   * Read the search index's snapshot when it is first needed or `loadIndex` is called, not at open
   * (serve: its first answers do not wait for it; catalog-index.ts).
   */
  deferIndex?: boolean | undefined;
}

/** The JSON snapshot of mcpproxy 0.1, replaced by SNAPSHOT_FILE; removed when found. */
const LEGACY_SNAPSHOT_FILE = "search-index.json";

export async function openToolCatalog(options: ToolCatalogOptions): Promise<ToolCatalog> {
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
  for (const { server, tool, name, hash } of store.listTools()) {
    // Made field by field, its key once: at 100,000 tools a spread and a second key cost every start.
    const key = toolKey({ server, tool });
    tools.set(key, { server, tool, name, hash, key });
  }
  const view = createOverrideView(options.toolOverrides ?? NO_OVERRIDES);
  const index = await openCatalogIndex({
    dataDir: options.dataDir,
    readOnly,
    store,
    view,
    tools,
    logger: options.logger,
    deferLoad: options.deferIndex,
  });
  const definitionOf = (tool: CatalogTool) => {
    const definition = store.definitionOf(tool.server, tool.tool);
    return definition && view.shown(tool, definition);
  };
  const shownHash = (tool: CatalogTool) => {
    const definition = view.reshapes(tool) ? definitionOf(tool) : undefined;
    return definition ? hashTool(definition) : tool.hash;
  };
  const vectors = options.embedder
    ? openToolVectors(
        options.embedder,
        store,
        tools,
        { ...options, isOnDemand: options.vectorUse === "fallback" },
        { hashOf: shownHash, definitionOf },
      )
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
  const names = createCatalogNames({
    tools,
    store,
    view,
    toolNameLimit: options.toolNameLimit,
    reservedNames: options.reservedNames,
    onRenamed: index.markChanged,
  });
  const toolsOfServer = new Map<string, Set<string>>();
  for (const tool of tools.values()) addToServer(toolsOfServer, tool);

  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  /** In-process changes, counted once they are made (version()); another process's show in data_version. */
  let changes = 0;
  const counted = <T>(work: Promise<T>): Promise<T> =>
    work.finally(() => {
      changes++;
    });
  /** A server synced with what it listed before changes nothing: the version stays (its watches do not walk). */
  const countedIfChanged = (work: Promise<SyncCounts>): Promise<SyncCounts> =>
    work.then(
      (counts) => {
        if (counts.added + counts.updated + counts.removed > 0) changes++;
        return counts;
      },
      (error: unknown) => {
        changes++;
        throw error;
      },
    );
  const instructions = {
    get: (server: string) => store.instructions.get(server),
    all: () => store.instructions.all(),
    put(server: string, text: string | undefined) {
      // Each connect puts what the server sent: the same text again is no change (the watches
      // would walk every server each second of a first pass over thousands).
      const isChanged = store.instructions.put(server, text);
      if (isChanged) changes++;
      return isChanged;
    },
    forgetExcept(keep: ReadonlySet<string>) {
      store.instructions.forgetExcept(keep);
      changes++;
    },
  };

  const sync = createToolSync({
    tools,
    toolsOfServer,
    store,
    view,
    approvals,
    vectors,
    names,
    index,
    logger: options.logger,
  });

  const { searchAllWithHeld } = createCatalogSearch({
    index: index.current,
    tools,
    vectors,
    vectorUse: options.vectorUse ?? "always",
    fallbackWait: options.fallbackWait ?? FALLBACK_WAIT_TOOLS,
    logger: options.logger,
    approvals,
    isHidden: (tool) => view.isHidden(tool),
    definitionOf,
    ensureNames: names.ensure,
  });

  return {
    ...(recovered ? { recovered } : {}),
    ...(capabilities ? { capabilities } : {}),
    size: () => tools.size,
    get(publicName) {
      names.ensure();
      const tool = names.byName(publicName);
      return tool && !view.isHidden(tool) ? tool : undefined;
    },
    disabled(publicName) {
      names.ensure();
      const tool = names.byName(publicName);
      return tool && view.isHidden(tool) ? tool : undefined;
    },
    definitionOf,
    shownHash,
    setOverrides: (next) => counted(serialized(() => sync.setOverrides(next))),
    isQuarantined: (tool) => approvals?.isQuarantined(tool) ?? false,
    quarantined: () => approvals?.quarantinedAmong([...tools.values()]) ?? [],
    approve: (chosen) => approvals?.approveAsTheyAre(chosen) ?? 0,
    version: () => `${changes}:${approvals?.version() ?? 0}:${store.dataVersion()}`,
    findings: () => approvals?.findings() ?? [],
    names(server) {
      names.ensure();
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
      return countedIfChanged(serialized(() => sync.syncServer(server, incoming)));
    },
    removeServersExcept: (keep) => counted(serialized(() => sync.removeServersExcept(keep))),
    forgetServersExcept(keep) {
      approvals?.forgetServersExcept(keep);
      store.eras.forgetExcept(keep);
      instructions.forgetExcept(keep);
    },
    eras: store.eras,
    instructions,
    search: async (query, limit, minScore) => (await searchAllWithHeld([query], limit, minScore))[0]!.hits,
    searchWithHeld: async (query, limit, minScore) => (await searchAllWithHeld([query], limit, minScore))[0]!,
    searchAllWithHeld,
    async whenEmbedded(options) {
      if (options?.start) await vectors?.prepare(Number.POSITIVE_INFINITY);
      await vectors?.whenReady();
    },
    loadIndex: index.load,
    persist: () =>
      serialized(async () => {
        names.ensure();
        await index.save();
      }),
    close: async () => {
      await vectors?.stop();
      store.close();
      await options.embedder?.close?.();
    },
  };
}
