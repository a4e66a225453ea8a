import type { ResolvedConfig } from "../config/load-config.ts";
import { openCatalogStore } from "../index/catalog-store.ts";
import type { Logger } from "../log.ts";
import { openLocalCopy } from "./local-copy.ts";
import { openStoreOf } from "./open-store.ts";
import { startCatalogReplica } from "./postgres/catalog-replica.ts";

/**
 * Runs a command that reads and writes the data dir's catalog (`approve`) against the shared
 * store when one is configured: the catalog is brought up to date from the store first, the
 * command runs as it does on one machine, and what it wrote is pushed before it returns, so every
 * replica applies it. Without a store, it only runs the command.
 */
export async function withStoreCopy<T>(
  config: ResolvedConfig,
  logger: Logger,
  run: () => Promise<T>,
): Promise<T> {
  const store = await openStoreOf(config, logger, process.env, { quiet: true });
  if (!store) return run();
  try {
    openCatalogStore(config.dataDir).close();
    const copy = openLocalCopy(config.dataDir);
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
  } finally {
    await store.close();
  }
}
