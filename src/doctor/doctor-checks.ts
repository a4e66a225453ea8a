import { upstreamAuth } from "../auth/upstream-auth.ts";
import { storeLocationOf } from "../config/store-setting.ts";
import { rememberedPort } from "../store/service-port.ts";
import { CONNECT_CONCURRENCY, mapConcurrently } from "../upstream/map-concurrently.ts";
import { upstreamBounds } from "../upstream/upstream-bounds.ts";
import { checkClients } from "./client-checks.ts";
import { type ConfigCheckOptions, checkConfig, checkDataDir, overridesOf } from "./config-checks.ts";
import { checkEmbedder, checkPlugins } from "./embedder-plugin-checks.ts";
import type { Finding, Findings } from "./finding.ts";
import { checkServer } from "./server-checks.ts";
import { checkStore } from "./store-checks.ts";

/**
 * `mcpproxy doctor`: every check in its order (the config, the data dir, the shared store when there
 * is one, the servers, the embedder and plugins, the clients), each area in a module of its own;
 * here only the order, what each check is given, and each finding told as soon as it is known.
 */

export interface DoctorOptions extends ConfigCheckOptions {
  /**
   * Told of each finding as soon as it is known: servers in the order they answer or give up, so
   * a slow one does not hold back the lines of the others (it may take its whole timeoutMs).
   */
  onFinding?: (finding: Finding) => void;
  /** Aborted by Ctrl-C or SIGTERM: servers being checked are ended at once and the checks stop. */
  signal?: AbortSignal | undefined;
}

/** Every finding, servers in config order whatever order they answered in. */
export async function runDoctor(options: DoctorOptions): Promise<Finding[]> {
  const all: Finding[] = [];
  const tell = (finding: Finding) => options.onFinding?.(finding);
  const findings: Findings = {
    push(...found) {
      all.push(...found);
      found.forEach(tell);
    },
  };
  const config = checkConfig(options, findings);
  if (config) {
    const store = storeLocationOf(config.store);
    await checkDataDir(config, findings, store.kind !== "local");
    // With a shared store, the servers every replica runs are its registry's.
    let servers = config.servers;
    if (store.kind !== "local") {
      const checked = await checkStore({
        ...{ config, url: store.url, shown: store.shown, env: options.env },
        load: { configFlag: options.configFlag, cwd: options.cwd, overrides: overridesOf(options) },
      });
      findings.push(...checked.findings);
      servers = checked.config?.servers ?? [];
    }
    const auth = upstreamAuth(config.dataDir);
    all.push(
      ...(await mapConcurrently(servers, CONNECT_CONCURRENCY, async (server) => {
        const finding = await checkServer(server, options.env, auth, upstreamBounds(config), options.signal);
        tell(finding);
        return finding;
      })),
    );
    if (options.signal?.aborted) return all;
    await checkEmbedder(config, findings);
    await checkPlugins(config, findings);
  }
  // A client pointed at the background service (`import --use-service`) uses mcpproxy too.
  checkClients(options, findings, config ? rememberedPort(config.dataDir) : undefined);
  return all;
}
