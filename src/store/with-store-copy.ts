import type { Logger } from "../log.ts";
import { openLocalCopy } from "./local-copy.ts";
import { startCatalogReplica } from "./postgres/catalog-replica.ts";
import type { SharedStore } from "./shared-store.ts";
import { openCatalogStore } from "./sqlite/catalog-store.ts";

/**
 * Runs a command that reads and writes the data dir's catalog (`approve`) against the shared
 * store when one is open: the catalog is brought up to date from the store first, the command runs
 * as it does on one machine, and what it wrote is pushed before it returns, so every replica
 * applies it. Without a store, it only runs the command.
 */
export async function withCatalogCopy<T>(
  store: SharedStore | undefined,
  dataDir: string,
  logger: Logger,
  run: () => Promise<T>,
): Promise<T> {
  if (!store) return run();
  openCatalogStore(dataDir).close();
  const copy = openLocalCopy(dataDir);
  try {
    const replica = await startCatalogReplica(store, copy, logger);
    try {
      return await run();
    } finally {
      await replica.stop();
    }
  } finally {
    copy.close();
  }
}
