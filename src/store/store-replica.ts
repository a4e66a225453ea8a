import type { Logger } from "../log.ts";
import { openLocalCopy } from "./local-copy.ts";
import { type CatalogReplica, startCatalogReplica } from "./postgres/catalog-replica.ts";
import { openStoreLease } from "./postgres/store-lease.ts";
import type { SharedStore } from "./shared-store.ts";
import type { WriterLock } from "./sqlite/writer-lock.ts";

/**
 * A serve's part in a team deployment: its data dir's catalog kept as a copy of the shared one
 * (catalog-replica.ts), and the lease that says whether it is the replica that indexes. The lease
 * stands in for the data dir's writer lock everywhere serve asks "may I write the catalog?".
 */
export interface StoreReplica {
  lock: WriterLock;
  catalog: CatalogReplica;
  stop(): Promise<void>;
}

export async function startStoreReplica(
  store: SharedStore,
  dataDir: string,
  local: WriterLock,
  logger: Logger,
): Promise<StoreReplica | undefined> {
  if (!local.isHeld) {
    logger.warn(
      `another mcpproxy uses ${dataDir}: each replica of a shared store needs a data dir of its own; ` +
        "this one serves without copying the shared catalog",
    );
    return undefined;
  }
  const copy = openLocalCopy(dataDir);
  const catalog = await startCatalogReplica(store, copy, logger.child("store"));
  const lock = await openStoreLease(store, local, logger.child("store"));
  await lock.tryAcquireNow();
  logger.info(
    lock.isHeld
      ? "this replica holds the shared store's lease: it indexes servers for all"
      : "another replica holds the shared store's lease: this one serves from the shared catalog and takes over if that one stops",
  );
  return {
    lock,
    catalog,
    async stop() {
      await catalog.stop();
      copy.close();
    },
  };
}
