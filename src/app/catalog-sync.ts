import type { ResolvedConfig } from "../config/load-config.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import { describeError } from "../errors.ts";
import { approvedTool, publicDefinition } from "../index/retrieve-tools.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { Logger } from "../log.ts";
import type { PluginRunner } from "../plugins/plugin-runner.ts";
import type { SessionRegistry } from "../routing/session-registry.ts";
import { registeredToolOf } from "../server/tools/retrieve-tools-call.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
import type { UpstreamTool } from "../upstream-tool.ts";
import { type IndexSummary, summarizeIndexing } from "./index-summary.ts";
import { toolOverridesOf } from "./open-catalog.ts";
import { refreshCatalog, summarizeRefresh } from "./refresh-catalog.ts";

/**
 * What `serve` does when the catalog changes: the first indexing pass at start, and a server's new
 * tool list later (it sent list_changed, or it came back). Both tell the plugins (`onToolsChanged`,
 * reason `catalog`), and a later change also updates or drops the tools sessions registered.
 */
export interface CatalogSync {
  /** The first indexing pass; never rejects (failures are logged). */
  indexAll(): Promise<void>;
  /**
   * Every enabled server indexed again, lazy ones started too, as `mcpproxy index` does (which
   * asks a serve for it); resolves to what that command prints.
   */
  reindex(): Promise<IndexSummary>;
  /** A server's tools changed; re-index it and bring the sessions' registered tools in line. */
  resync(server: string, tools: readonly object[]): Promise<void>;
  /**
   * Servers left the config, were disabled or await approval: their tools go, from the index and
   * from sessions; the approvals of servers no longer `configured` go too.
   */
  keepOnly(servers: ReadonlySet<string>, configured: ReadonlySet<string>): Promise<void>;
  /**
   * The config's tool overrides (`tools`, `disabledTools`) may have changed: the catalog takes
   * them, and the sessions' registered tools (and a passthrough list) follow, without a restart.
   */
  applyOverrides(servers: readonly ServerConfig[]): Promise<void>;
}

export interface CatalogSyncOptions {
  config: ResolvedConfig;
  /** The servers as they are now (they change at run time); unset, the config's. */
  servers?: () => readonly ServerConfig[];
  catalog: ToolCatalog;
  pool: UpstreamPool;
  logger: Logger;
  plugins: PluginRunner;
  sessions: SessionRegistry;
  /** `false` (passthrough): lazy servers stay unstarted even when the index knows none of their tools. */
  startUnindexed?: boolean | undefined;
  /** Overrides changed what is shown: in passthrough the client's own list changed. */
  onOverridesChanged?: (() => void) | undefined;
}

export function createCatalogSync(options: CatalogSyncOptions): CatalogSync {
  const { catalog, pool, logger, plugins, sessions } = options;
  const current = (): ResolvedConfig =>
    options.servers ? { ...options.config, servers: options.servers() } : options.config;

  /** Runs `change` and tells the plugins which public names it added and removed. */
  const announcing = async (server: string | undefined, change: () => Promise<void>) => {
    if (!plugins.has("onToolsChanged")) return change();
    const before = new Set(catalog.names(server));
    await change();
    const after = catalog.names(server);
    const added = after.filter((name) => !before.has(name));
    const kept = new Set(after);
    const removed = [...before].filter((name) => !kept.has(name));
    if (added.length > 0 || removed.length > 0)
      void plugins.toolsChanged({ reason: "catalog", added, removed });
  };

  const registrable = (name: string): { hash: string; definition: UpstreamTool } | undefined => {
    const approved = approvedTool(catalog, name);
    return approved
      ? {
          hash: catalog.shownHash(approved.tool),
          definition: registeredToolOf(publicDefinition(approved.tool, approved.definition)),
        }
      : undefined;
  };

  /**
   * One re-index per server at a time, and the newest list waiting behind it: lists that arrive
   * meanwhile replace each other, so a burst costs two passes, and they never run side by side.
   */
  const resyncing = new Map<string, { running: Promise<void>; next?: readonly object[] | undefined }>();
  const resyncNow = async (server: string, tools: readonly object[]) => {
    try {
      await announcing(server, async () => {
        const counts = await catalog.syncServer(server, tools as readonly UpstreamTool[]);
        await catalog.persist();
        logger.info(`re-indexed ${server} after its tool list changed`, { ...counts });
      });
      await sessions.revalidateAll(registrable);
    } catch (error) {
      logger.error(`re-indexing ${server} failed: ${describeError(error)}`);
    }
  };

  return {
    async indexAll() {
      const config = current();
      const enabled = config.servers.filter((server) => server.enabled);
      if (enabled.length === 0) {
        logger.warn(
          `no enabled servers in ${config.configPath}: add some under "mcpServers"; ` +
            `retrieve_tools answers from the ${catalog.size()} tools of the saved index only`,
        );
      }
      try {
        await announcing(undefined, async () => {
          const report = await refreshCatalog(config, catalog, pool, {
            logger,
            startUnindexed: options.startUnindexed,
            servers: options.servers,
          });
          // A session that ended while servers were still connecting: they were stopped on purpose.
          if (report.stopped) return logger.debug("indexing stopped: the proxy is shutting down");
          if (enabled.length === 0) return;
          logger.info(summarizeRefresh(report));
          const reached = report.servers.filter((server) => !server.error).length;
          if (reached === 0 && report.toolCount === 0) {
            logger.warn(
              "no upstream server could be reached and there is no saved index: retrieve_tools will find nothing " +
                "until a server is reachable (see the errors above)",
            );
          } else if (reached === 0) {
            logger.warn(
              `no upstream server could be reached; searching the saved index of ${report.toolCount} tools`,
            );
          }
        });
      } catch (error) {
        logger.error(`indexing failed: ${describeError(error)}`);
      }
    },

    async reindex() {
      const config = current();
      let summary: IndexSummary | undefined;
      await announcing(undefined, async () => {
        const report = await refreshCatalog(config, catalog, pool, {
          logger,
          includeLazy: true,
          servers: options.servers,
        });
        logger.info(summarizeRefresh(report));
        summary = { ...summarizeIndexing(report, catalog), configPath: config.configPath };
      });
      await sessions.revalidateAll(registrable);
      return summary!;
    },

    async keepOnly(servers, configured) {
      try {
        let removed = 0;
        await announcing(undefined, async () => {
          removed = (await catalog.removeServersExcept(servers)).removed;
          catalog.forgetServersExcept(configured);
          await catalog.persist();
        });
        if (removed > 0) {
          logger.info(`removed the ${removed} tools of servers no longer configured or enabled`);
          await sessions.revalidateAll(registrable);
        }
      } catch (error) {
        logger.error(`removing tools failed: ${describeError(error)}`);
      }
    },

    async applyOverrides(servers) {
      let touched = 0;
      try {
        await announcing(undefined, async () => {
          touched = await catalog.setOverrides(toolOverridesOf(servers));
          await catalog.persist();
        });
      } catch (error) {
        return logger.error(`applying the tool overrides failed: ${describeError(error)}`);
      }
      if (touched === 0) return;
      logger.info(`applied the config's tool overrides: ${touched} tools shown differently`);
      await sessions.revalidateAll(registrable);
      options.onOverridesChanged?.();
    },

    resync(server, tools) {
      const busy = resyncing.get(server);
      if (busy) {
        busy.next = tools;
        return busy.running;
      }
      const entry: { running: Promise<void>; next?: readonly object[] | undefined } = {
        running: Promise.resolve(),
      };
      entry.running = (async () => {
        let list: readonly object[] | undefined = tools;
        while (list) {
          entry.next = undefined;
          await resyncNow(server, list);
          list = entry.next;
        }
        resyncing.delete(server);
      })();
      resyncing.set(server, entry);
      return entry.running;
    },
  };
}
