import type { ResolvedConfig } from "../config/load-config.ts";
import { storeLocationOf } from "../config/store-setting.ts";
import type { Logger } from "../log.ts";
import type { SharedStore } from "./shared-store.ts";

/** The shared store the config names, opened (serve); undefined for the data dir alone. */
export async function openStoreOf(
  config: Pick<ResolvedConfig, "store">,
  logger: Logger,
  env: Readonly<Record<string, string | undefined>> = process.env,
  /**
   * quiet: a command that opens the store for a moment: not listed among the replicas, nothing said;
   * isReadOnly: one that only reads (shared-store.ts).
   */
  options: { quiet?: boolean; isReadOnly?: boolean } = {},
): Promise<SharedStore | undefined> {
  const location = storeLocationOf(config.store);
  if (location.kind === "local") return undefined;
  // The PostgreSQL client (and node:net, node:tls) is imported only by a proxy that has a store.
  const { openSharedStore } = await import("./shared-store.ts");
  const store = await openSharedStore({
    ...{ url: location.url, shown: location.shown, env, logger },
    isReplica: !options.quiet,
    isReadOnly: options.isReadOnly ?? false,
  });
  if (!options.quiet) logger.info(`sharing state in ${location.shown} as replica ${store.replicaId}`);
  return store;
}
