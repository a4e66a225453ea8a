import { existsSync, readFileSync } from "node:fs";
import { hostname, userInfo } from "node:os";
import type { ResolvedConfig, SettingOverrides } from "../config/load-config.ts";
import { configTextWithServers } from "../config/registry-text.ts";
import { openStoreOf } from "../store/open-store.ts";
import { type ServerEntries, type ServerRegistry, serverRegistryOf } from "../store/server-registry.ts";
import type { SharedStore } from "../store/shared-store.ts";
import { withCatalogSnapshot } from "../store/with-store-copy.ts";
import type { CommandValues } from "./command.ts";
import { commandLogger } from "./command-config.ts";

/**
 * The shared store for the commands that act on what replicas share (`servers`, `approve`, `auth`,
 * `stats`; `search`, `tools`, `index` and `doctor`): `--store URL` (STORE_OPTION in command.ts), else
 * MCPPROXY_STORE or `mcpproxy.store` as serve reads them. With one, a command reads and edits the
 * store's server registry (and OAuth logins, catalog) instead of the file's, and every running
 * replica applies the change.
 */
export function storeOverrides(values: CommandValues): SettingOverrides {
  return typeof values.store === "string" ? { store: { value: values.store, flag: "--store" } } : {};
}

/**
 * Runs `work` with the config's shared store open (undefined without one), and closes it after.
 * `isReadOnly`: the command only reads (`search`, `tools`), and opening the store writes nothing.
 */
export async function withCommandStore<T>(
  config: ResolvedConfig,
  work: (store: SharedStore | undefined) => Promise<T>,
  options: { isReadOnly?: boolean } = {},
): Promise<T> {
  // A command, not a replica: not listed among them, nothing said.
  const store = await openStoreOf(config, commandLogger(config).child("store"), process.env, {
    quiet: true,
    isReadOnly: options.isReadOnly ?? false,
  });
  try {
    return await work(store);
  } finally {
    await store?.close();
  }
}

/** Who made a command's edit, as the registry keeps it (`updated_by`). */
export function commandEditor(command: string): string {
  let user = "";
  try {
    user = `${userInfo().username}@`;
  } catch {}
  return `mcpproxy ${command} by ${user}${hostname()}`;
}

export function configFileText(config: ResolvedConfig): string | undefined {
  return existsSync(config.configPath) ? readFileSync(config.configPath, "utf8") : undefined;
}

/** The registry's servers and the config as a replica loads it with them (the file's other settings). */
export async function registryConfig(
  registry: ServerRegistry,
  config: ResolvedConfig,
  load: (text: string) => ResolvedConfig,
): Promise<{ entries: ServerEntries; config: ResolvedConfig }> {
  const entries = await registry.list();
  return { entries, config: load(configTextWithServers(configFileText(config), entries)) };
}

/**
 * Runs a command that only reads the catalog (`search`, `tools`) against the catalog replicas use:
 * the data dir's, or with a shared store the store's (a snapshot of it, with the servers of its
 * registry, not the file's). Nothing is written to the store, or to the data dir.
 */
export async function withCatalogToRead<T>(
  config: ResolvedConfig,
  load: (text: string) => ResolvedConfig,
  run: (config: ResolvedConfig) => Promise<T>,
): Promise<T> {
  return withCommandStore(config, (store) => withStoreView(store, config, load, run), { isReadOnly: true });
}

/**
 * `run` with the config a replica sees: without a store, `config` as it is; with one, the servers
 * of its registry and a data dir holding a snapshot of its catalog (so `stats --store` counts the
 * team's servers and tools, not the file's and the local data dir's).
 */
export async function withStoreView<T>(
  store: SharedStore | undefined,
  config: ResolvedConfig,
  load: (text: string) => ResolvedConfig,
  run: (config: ResolvedConfig) => Promise<T>,
): Promise<T> {
  if (!store) return run(config);
  const stored = await registryConfig(serverRegistryOf(store), config, load);
  return withCatalogSnapshot(store, config.dataDir, (dataDir) => run({ ...stored.config, dataDir }));
}
