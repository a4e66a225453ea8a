import { accessSync, constants, existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { openCatalog } from "../app/open-catalog.ts";
import { loadConfig, type ResolvedConfig, type SettingOverrides } from "../config/load-config.ts";
import { locateConfig } from "../config/paths.ts";
import { storeLocationOf } from "../config/store-setting.ts";
import { describeError } from "../errors.ts";
import { createLogger } from "../log.ts";
import { CATALOG_FILE } from "../store/sqlite/catalog-store.ts";
import { type Findings, problemText } from "./finding.ts";

/**
 * `doctor`'s first checks, of where mcpproxy keeps its things: which config file it reads and why
 * (a flag, MCPPROXY_CONFIG_PATH, the directory, the default), whether it loads and how many servers
 * it enables; then the data dir: there, writable, private to the user, and its index readable with
 * every enabled server in it (with a shared store, the store's catalog is checked in its place).
 */

/** Where doctor was asked to look: the flags, the environment and the directory it runs in. */
export interface ConfigCheckOptions {
  configFlag?: string | undefined;
  dataDirFlag?: string | undefined;
  /** `--store URL`: the shared store to check (else MCPPROXY_STORE or mcpproxy.store, as serve reads them). */
  storeFlag?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
}

export function checkConfig(options: ConfigCheckOptions, findings: Findings): ResolvedConfig | undefined {
  const { env, cwd, configFlag } = options;
  const location = locateConfig(configFlag, env, cwd);
  const why = configFlag
    ? "given with --config"
    : env.MCPPROXY_CONFIG_PATH
      ? "from MCPPROXY_CONFIG_PATH"
      : location.path === join(cwd, "mcp_config.json")
        ? "./mcp_config.json in this directory"
        : "the default; no --config, MCPPROXY_CONFIG_PATH or ./mcp_config.json";
  if (location.mustCreate) {
    findings.push({
      area: "config",
      subject: location.path,
      status: "warn",
      detail: `does not exist yet (${why}); mcpproxy creates it empty on first use`,
      fix: "run `mcpproxy import` to bring in your clients' servers",
    });
    return undefined;
  }
  try {
    const config = loadConfig({ configFlag, env, cwd, overrides: overridesOf(options) });
    const enabled = config.servers.filter((server) => server.enabled).length;
    const isShared = storeLocationOf(config.store).kind !== "local";
    findings.push(
      isShared
        ? {
            area: "config",
            subject: location.path,
            status: "ok",
            detail: `${why}; the servers are the shared store's registry's (below), not this file's`,
          }
        : enabled === 0
          ? {
              area: "config",
              subject: location.path,
              status: "warn",
              detail: `${why}: no enabled servers`,
              fix: "run `mcpproxy import`, or add servers under mcpServers",
            }
          : {
              area: "config",
              subject: location.path,
              status: "ok",
              detail: `${why}: ${config.servers.length} server(s), ${enabled} enabled`,
            },
    );
    return config;
  } catch (error) {
    findings.push({
      area: "config",
      subject: location.path,
      status: "fail",
      detail: `${why}: ${problemText(error)}`,
      fix: "fix the file (each problem is named with its key), then run doctor again",
    });
    return undefined;
  }
}

export function overridesOf(options: ConfigCheckOptions): SettingOverrides {
  return {
    ...(options.dataDirFlag ? { dataDir: { value: options.dataDirFlag, flag: "--data-dir" } } : {}),
    ...(options.storeFlag ? { store: { value: options.storeFlag, flag: "--store" } } : {}),
  };
}

/** `isShared`: a shared store's catalog is what replicas serve (checked with the store), not this one. */
export async function checkDataDir(
  config: ResolvedConfig,
  findings: Findings,
  isShared: boolean,
): Promise<void> {
  const dir = config.dataDir;
  if (!existsSync(dir)) {
    findings.push({
      area: "data",
      subject: dir,
      status: "info",
      detail: "not created yet; `mcpproxy index` creates it (0700)",
    });
    return;
  }
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    findings.push({
      area: "data",
      subject: dir,
      status: "fail",
      detail: "is not writable",
      fix: `make it yours: chmod u+rwx ${dir}`,
    });
    return;
  }
  const mode = statSync(dir).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    findings.push({
      area: "data",
      subject: dir,
      status: "warn",
      detail: `is readable by other users (mode ${mode.toString(8)}); it holds tool definitions and tokens`,
      fix: `chmod 700 ${dir}`,
    });
  }
  if (isShared) {
    findings.push({
      area: "data",
      subject: dir,
      status: "ok",
      detail: `writable, mode ${mode.toString(8)}; the catalog checked is the shared store's (below)`,
    });
    return;
  }
  if (!existsSync(join(dir, CATALOG_FILE))) {
    findings.push({
      area: "data",
      subject: dir,
      status: "warn",
      detail: "has no index yet",
      fix: "run `mcpproxy index`",
    });
    return;
  }
  try {
    const logger = createLogger({ level: "error" });
    const catalog = await openCatalog(config, logger, { readOnly: true });
    try {
      const names = catalog.names();
      const servers = new Set(names.map((name) => catalog.get(name)?.server));
      const configured = new Set(config.servers.filter((s) => s.enabled).map((s) => s.name));
      const missing = [...configured].filter((name) => !servers.has(name));
      findings.push({
        area: "data",
        subject: dir,
        status: missing.length > 0 ? "warn" : "ok",
        detail:
          `writable, mode ${mode.toString(8)}; index holds ${names.length} tool(s) from ${servers.size} server(s)` +
          (missing.length > 0 ? `; not indexed yet: ${missing.join(", ")}` : ""),
        ...(missing.length > 0 ? { fix: "run `mcpproxy index`" } : {}),
      });
    } finally {
      await catalog.close();
    }
  } catch (error) {
    findings.push({
      area: "data",
      subject: dir,
      status: "fail",
      detail: `the index cannot be read: ${describeError(error)}`,
      fix: "run `mcpproxy index --force` to rebuild it",
    });
  }
}
