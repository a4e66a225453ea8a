import { createHash } from "node:crypto";
import { existsSync, readFileSync, watch } from "node:fs";
import { basename, dirname } from "node:path";
import type { ResolvedConfig } from "../config/load-config.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import { configTextWithServers } from "../config/registry-text.ts";
import { describeError, isProxyError, ProxyError } from "../errors.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { Logger } from "../log.ts";
import { canonicalJson } from "../security/canonical-json.ts";
import {
  type ConfigServers,
  configServersOf,
  type ServerEdit,
  updateConfigServers,
} from "../store/config-writer.ts";
import type { ServerRegistry } from "../store/server-registry.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
import type { CatalogSync } from "./catalog-sync.ts";
import { isUnindexed, pinnedServers, reviewListed, runnableServers } from "./refresh-catalog.ts";

/**
 * The servers of a running proxy, changed without a restart: by an agent (`upstream_servers`), by
 * `mcpproxy servers` or by hand in the config file, which is the one source of truth. Every change
 * is written to the file (in place, a rolling `.bak` beside it) and read back from it; a change to
 * the file, wherever it came from, is applied to the affected servers only: removed ones are
 * stopped and their tools dropped, new and changed ones (re)started and indexed, the others and
 * every client session left alone. An edit that does not validate is refused (the file is not
 * written) or, made by hand, logged, and the last good servers stay. The proxy's own writes are
 * recognised by their content and not applied twice.
 *
 * With a shared store (`registry`), the servers are the registry's instead of the file's: edits go
 * to the registry (every replica hears of them and reloads), and the file keeps every other setting.
 * The config applied is always the file's text with the registry's servers (registry-text.ts),
 * loaded like the file, so the same checks and the same diff of the pool apply.
 */
export interface ServerManager {
  servers(): readonly ServerConfig[];
  /**
   * Changes the config file with the edits `plan` makes of the servers it holds (planned under the
   * config lock, from the file as it is then) and applies it; throws ProxyError for invalid entries.
   */
  edit(plan: (current: ConfigServers["servers"]) => readonly ServerEdit[]): Promise<AppliedChange>;
  restart(server: string): Promise<void>;
  /** Reads the config file again and applies what changed (the watcher calls it). */
  reload(): Promise<AppliedChange | undefined>;
  /** Starts watching the config file; returns a function that stops. */
  watch(): () => void;
}

interface AppliedChange {
  added: string[];
  removed: string[];
  changed: string[];
}

export interface ServerManagerOptions {
  config: ResolvedConfig;
  /** Loads the config file as serve did at start (the same flags and environment); `text` instead of the file. */
  load(text?: string): ResolvedConfig;
  pool: UpstreamPool;
  sync: CatalogSync;
  catalog: ToolCatalog;
  logger: Logger;
  /** `false` (passthrough): a lazy server added or changed is not started even when unindexed. */
  startUnindexed?: boolean | undefined;
  /** The shared store's server registry: the servers come from it, not from the file. */
  registry?: { servers: ServerRegistry; by: string } | undefined;
}

/** How long the watcher waits for an editor to finish writing before it reads the file. */
const SETTLE_MS = 150;

const digest = (text: string) => createHash("sha256").update(text).digest("hex");

export function createServerManager(options: ServerManagerOptions): ServerManager {
  const { pool, sync, catalog, logger } = options;
  const path = options.config.configPath;
  let current = options.config;
  const fileText = () => (existsSync(path) ? readFileSync(path, "utf8") : undefined);
  let written: string | undefined = existsSync(path) ? digest(readFileSync(path, "utf8")) : undefined;
  const registry = options.registry;
  /** The file's own servers, last seen: an edit of them is not applied with a registry, and said so. */
  const fileServersOf = (text: string | undefined) => {
    try {
      return canonicalJson(configServersOf(text, path).servers);
    } catch {
      return "";
    }
  };
  let fileServers = registry ? fileServersOf(fileText()) : "";
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => undefined);
    return run;
  };

  /** Brings pool and catalog to `next`; only the servers that differ are touched. */
  const apply = async (next: ResolvedConfig): Promise<AppliedChange> => {
    const changes = await pool.setServers(next.servers);
    current = next;
    await sync.applyOverrides(next.servers);
    // A removed server's approvals go with it: one added again under its name is a new server.
    await sync.keepOnly(runnableServers(next.servers), pinnedServers(next.servers));
    const starting = [...changes.added, ...changes.changed].filter((name) => {
      const server = next.servers.find((s) => s.name === name);
      const startsLazy = options.startUnindexed !== false && isUnindexed(catalog, name);
      return server?.enabled && (!server.lazy || startsLazy);
    });
    await Promise.all(
      starting.map(async (name) => {
        const outcome = await pool.connectServer(name);
        if (outcome.tools) {
          reviewListed(catalog, outcome);
          await sync.resync(name, outcome.tools);
        } else if (outcome.awaitingApproval) logger.child(name).warn(outcome.error ?? "awaits approval");
        else if (outcome.notStarted) logger.warn(outcome.error ?? `${name} is not started`);
        else if (!outcome.stopped)
          logger.child(name).warn(`could not connect: ${outcome.error ?? "unknown error"}`);
      }),
    );
    const changed = [...changes.added, ...changes.removed, ...changes.changed];
    if (changed.length > 0) {
      logger.info(
        `config applied: ${changes.added.length} added, ${changes.removed.length} removed, ${changes.changed.length} changed (${changed.join(", ")})`,
      );
    }
    return changes;
  };

  /** The registry's servers applied, with the file as it is now; an invalid result keeps the last good. */
  const applyRegistry = async (servers: ServerRegistry): Promise<AppliedChange | undefined> => {
    let next: ResolvedConfig;
    try {
      next = options.load(configTextWithServers(fileText(), await servers.list()));
    } catch (error) {
      const detail = isProxyError(error)
        ? [error.message, ...error.details].join("\n  ")
        : describeError(error);
      logger.error(`the shared store's servers do not load; keeping the last good ones:\n  ${detail}`);
      return undefined;
    }
    return apply(next);
  };

  const manager: ServerManager = {
    servers: () => current.servers,

    edit: (plan) =>
      serialized(async () => {
        if (registry) {
          let next: ResolvedConfig | undefined;
          const text = fileText();
          await registry.servers.edit(plan, {
            by: registry.by,
            validate: (servers) => {
              next = options.load(configTextWithServers(text, servers));
            },
          });
          return apply(next ?? options.load(configTextWithServers(text, await registry.servers.list())));
        }
        let next: ResolvedConfig | undefined;
        // Checked before it is written: an edit that would make the file invalid never reaches it.
        const { text, conflicts } = await updateConfigServers(path, (current) => plan(current.servers), {
          backupAs: "rolling",
          validate: (candidate) => {
            next = options.load(candidate);
          },
        });
        for (const copy of conflicts) {
          logger.warn(`two saves of the config raced this edit: the one not kept is in ${copy}`);
        }
        written = digest(text);
        return apply(next ?? options.load());
      }),

    restart: (server) =>
      serialized(async () => {
        const outcome = await pool.restart(server);
        if (outcome.error)
          throw new ProxyError("UPSTREAM_CONNECT_FAILED", `${server} did not start again: ${outcome.error}`);
      }),

    reload: () =>
      serialized(async () => {
        if (!existsSync(path)) {
          logger.warn(`the config file ${path} is gone; keeping the servers as they are`);
          return undefined;
        }
        const text = readFileSync(path, "utf8");
        if (digest(text) === written) return undefined; // our own write, applied already
        written = digest(text);
        if (registry) {
          const servers = fileServersOf(text);
          if (servers !== fileServers)
            logger.warn(
              "the config file's servers changed, but with a shared store the servers are the store's: " +
                "change them with `mcpproxy servers … --store URL` (the file keeps every other setting)",
            );
          fileServers = servers;
          return applyRegistry(registry.servers);
        }
        let next: ResolvedConfig;
        try {
          next = options.load();
        } catch (error) {
          const detail = isProxyError(error)
            ? [error.message, ...error.details].join("\n  ")
            : describeError(error);
          logger.error(`the edited config is invalid; keeping the last good one:\n  ${detail}`);
          return undefined;
        }
        return apply(next);
      }),

    watch() {
      // Another replica's or a command's edit of the registry: applied here as it was there.
      const stopHearing = registry?.servers.onChange(() =>
        serialized(() => applyRegistry(registry.servers)).then(() => undefined),
      );
      // The directory, not the file: editors save by writing a new file and renaming it over.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const watcher = watch(dirname(path), (_event, file) => {
        if (file !== null && file !== basename(path)) return;
        clearTimeout(timer);
        timer = setTimeout(() => {
          manager
            .reload()
            .catch((error) => logger.error(`reloading the config failed: ${describeError(error)}`));
        }, SETTLE_MS);
      });
      return () => {
        stopHearing?.();
        clearTimeout(timer);
        watcher.close();
      };
    },
  };
  return manager;
}
