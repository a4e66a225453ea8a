import { existsSync, readFileSync } from "node:fs";
import type { ResolvedConfig } from "../config/load-config.ts";
import { configTextWithServers } from "../config/registry-text.ts";
import type { Logger } from "../log.ts";
import { configServersOf } from "../store/config-writer.ts";
import { type ServerRegistry, seedRegistry, serverRegistryOf } from "../store/server-registry.ts";
import type { SharedStore } from "../store/shared-store.ts";

/**
 * A serve with a shared store takes its servers from the store's registry (server-registry.ts):
 * seeded from the config file when it is empty (the first replica), then the registry's, whatever
 * the file says. Resolves to the config to serve (the file with the registry's servers) and the
 * registry the server manager edits and hears.
 */
export async function startRegistryServers(
  store: SharedStore,
  config: ResolvedConfig,
  load: (text?: string) => ResolvedConfig,
  logger: Logger,
): Promise<{ config: ResolvedConfig; registry: { servers: ServerRegistry; by: string } }> {
  const path = config.configPath;
  const fileText = existsSync(path) ? readFileSync(path, "utf8") : undefined;
  const seeded = await seedRegistry(
    store,
    configServersOf(fileText, path).servers,
    `${path} on ${store.replicaId}`,
  );
  const servers = serverRegistryOf(store);
  const entries = await servers.list();
  logger.info(
    seeded > 0
      ? `the shared store's server registry was empty: seeded with the ${seeded} servers of ${path}`
      : `${Object.keys(entries).length} servers from the shared store's registry (the config file's servers are not used)`,
  );
  return {
    config: load(configTextWithServers(fileText, entries)),
    registry: { servers, by: `upstream_servers on ${store.replicaId}` },
  };
}
