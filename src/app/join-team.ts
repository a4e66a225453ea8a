import type { ResolvedConfig } from "../config/load-config.ts";
import type { Logger } from "../log.ts";
import { answerIndexRequests } from "../store/index-requests.ts";
import { openSharedOAuthRecords, type SharedOAuthRecords } from "../store/oauth-records.ts";
import { openStoreOf } from "../store/open-store.ts";
import type { SharedStore } from "../store/shared-store.ts";
import { acquireWriterLock, unwritableDirLock, type WriterLock } from "../store/sqlite/writer-lock.ts";
import { startStoreReplica } from "../store/store-replica.ts";
import type { CleanupStack } from "./cleanup-stack.ts";
import type { IndexSummary } from "./index-summary.ts";
import { startRegistryServers } from "./registry-servers.ts";
import { type StoreLimits, startStoreLimits } from "./store-stats-limits.ts";

/**
 * What serve sets up for a team deployment (a shared store: src/store/), in one place: the store,
 * the servers of its registry, the shared OAuth logins and rate limits, and the lease in place of
 * the data dir's writer lock. On one machine (no store) it is the data dir's lock alone, as before.
 */
export interface Team {
  store: SharedStore | undefined;
  /** The config to serve: the file's, with the registry's servers when there is a store. */
  config: ResolvedConfig;
  registry: Awaited<ReturnType<typeof startRegistryServers>>["registry"] | undefined;
  logins: SharedOAuthRecords | undefined;
  limits: StoreLimits | undefined;
  /** Who may write the catalog: the store's lease, or the data dir's writer lock. */
  lock: WriterLock;
  /** What serve logs when it takes `lock` over (a replica: the lease; undefined: the data dir's). */
  takeOverMessage: string | undefined;
  /**
   * Answers `mcpproxy index --store` with `reindex` while this replica holds the lease (started by
   * index-keeper.ts once it does); undefined on one machine.
   */
  answerIndexRequests: ((reindex: () => Promise<IndexSummary>) => () => void) | undefined;
}

export async function joinTeam(
  config: ResolvedConfig,
  reloadConfig: (text?: string) => ResolvedConfig,
  logger: Logger,
  cleanup: CleanupStack,
  /** False where the data dir cannot be written (data-dir-access.ts): no lock file, nothing written there. */
  isDataDirWritable = true,
): Promise<Team> {
  const store = await openStoreOf(config, logger);
  cleanup.defer("close the shared store", () => store?.close());
  // With a store, the servers are its registry's (the file seeds an empty one).
  const registered = store ? await startRegistryServers(store, config, reloadConfig, logger) : undefined;
  // Upstream OAuth logins: the store's, sealed, shared by every replica (store/oauth-records.ts).
  const logins = store ? await openSharedOAuthRecords(store, logger.child("oauth")) : undefined;
  cleanup.defer("keep the last OAuth logins", () => logins?.flush().finally(() => logins.stop()));
  const limits = store ? startStoreLimits(store, logger.child("limits")) : undefined;
  cleanup.defer("stop the shared rate limits", () => limits?.close());
  const dirLock = isDataDirWritable ? acquireWriterLock(config.dataDir, "serve") : unwritableDirLock();
  const replica = store ? await startStoreReplica(store, config.dataDir, dirLock, logger) : undefined;
  const lock = replica?.lock ?? dirLock;
  cleanup.defer("release the index lock", () => lock.release());
  cleanup.defer("push the last catalog changes", () => replica?.stop());
  if (!lock.isHeld && !replica && isDataDirWritable) {
    const holder = lock.holder();
    logger.warn(
      `another mcpproxy${holder ? ` (pid ${holder.pid})` : ""} keeps the index in ${config.dataDir}: ` +
        "this one serves from it with its own servers and writes nothing there until that one exits",
    );
  }
  return {
    store,
    config: registered?.config ?? config,
    registry: registered?.registry,
    logins,
    limits,
    lock,
    // The replica that held the lease had a data dir of its own: this one's is not the story.
    takeOverMessage: replica
      ? "the replica that held the shared store's lease has stopped; this replica holds the lease now: " +
        "it indexes servers for all and answers `mcpproxy index --store`"
      : undefined,
    answerIndexRequests:
      store && replica
        ? (reindex) =>
            answerIndexRequests(store, {
              isHolder: () => lock.isHeld,
              // The summary is sent once the store holds what the pass wrote.
              reindex: async () => {
                const summary = await reindex();
                await replica.catalog.push();
                return summary;
              },
              logger: logger.child("store"),
            })
        : undefined,
  };
}
