import { accessSync, constants, existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { openCatalog } from "../app/open-catalog.ts";
import { isLoginNeeded } from "../auth/oauth-provider.ts";
import { type UpstreamAuth, upstreamAuth } from "../auth/upstream-auth.ts";
import { readConfigServers } from "../config/config-writer.ts";
import { loadConfig, type ResolvedConfig, type SettingOverrides } from "../config/load-config.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import { homeDir, locateConfig } from "../config/paths.ts";
import { describeError, isProxyError } from "../errors.ts";
import {
  CLIENT_IDS,
  CLIENT_NAMES,
  clientFiles,
  existingFiles,
  readClientFile,
} from "../import/client-configs.ts";
import { identityOf, isMcpproxyEntry, normalizeServer } from "../import/import-plan.ts";
import { createEmbedder } from "../index/embedders/create-embedder.ts";
import { createLogger } from "../log.ts";
import { loadPlugins } from "../plugins/load-plugins.ts";
import { CATALOG_FILE } from "../store/sqlite/catalog-store.ts";
import { storeLocationOf } from "../store/store-setting.ts";
import { CONNECT_CONCURRENCY, mapConcurrently } from "../upstream/map-concurrently.ts";
import { connectUpstream, type UpstreamBounds, upstreamBounds } from "../upstream/upstream-connection.ts";
import type { Finding } from "./finding.ts";
import { failureFix, missingCommand } from "./server-hints.ts";
import { checkStore } from "./store-checks.ts";

export interface DoctorOptions {
  configFlag?: string | undefined;
  dataDirFlag?: string | undefined;
  /** `--store URL`: the shared store to check (else MCPPROXY_STORE or mcpproxy.store, as serve reads them). */
  storeFlag?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /**
   * Told of each finding as soon as it is known: servers in the order they answer or give up, so
   * a slow one does not hold back the lines of the others (it may take its whole timeoutMs).
   */
  onFinding?: (finding: Finding) => void;
  /** Aborted by Ctrl-C or SIGTERM: servers being checked are ended at once and the checks stop. */
  signal?: AbortSignal | undefined;
}

/** Where the checks put what they find. */
interface Findings {
  push(...found: Finding[]): void;
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
  checkClients(options, findings);
  return all;
}

function checkConfig(options: DoctorOptions, findings: Findings): ResolvedConfig | undefined {
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

function overridesOf(options: DoctorOptions): SettingOverrides {
  return {
    ...(options.dataDirFlag ? { dataDir: { value: options.dataDirFlag, flag: "--data-dir" } } : {}),
    ...(options.storeFlag ? { store: { value: options.storeFlag, flag: "--store" } } : {}),
  };
}

/** `isShared`: a shared store's catalog is what replicas serve (checked with the store), not this one. */
async function checkDataDir(config: ResolvedConfig, findings: Findings, isShared: boolean): Promise<void> {
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

async function checkServer(
  server: ServerConfig,
  env: Readonly<Record<string, string | undefined>>,
  auth: UpstreamAuth,
  bounds: UpstreamBounds,
  signal?: AbortSignal,
): Promise<Finding> {
  const subject = server.name;
  if (!server.enabled) return { area: "server", subject, status: "info", detail: "disabled" };
  if (server.awaitingApproval) {
    return {
      area: "server",
      subject,
      status: "warn",
      detail: "awaiting approval: an agent added or changed it, so it was not started",
      fix: `review what it would run with \`mcpproxy approve\`, then \`mcpproxy approve ${server.name}\``,
    };
  }
  if (server.configProblem) {
    return {
      area: "server",
      subject,
      status: "fail",
      detail: `not started: ${server.configProblem}`,
      fix: `set what it names where mcpproxy starts, or leave it out: \`mcpproxy servers disable ${server.name}\``,
    };
  }
  const missing = server.transport === "stdio" ? missingCommand(server, env) : undefined;
  if (missing) return { area: "server", subject, status: "fail", ...missing };
  const started = performance.now();
  try {
    const connection = await connectUpstream(server, {
      env,
      ...bounds,
      authProvider: auth.providerFor(server),
      ...(signal ? { signal, stopSignal: signal } : {}),
    });
    const ms = Math.round(performance.now() - started);
    const info = connection.client.getServerVersion();
    const protocol = connection.protocolVersion;
    await connection.close();
    return {
      area: "server",
      subject,
      status: connection.tools.length === 0 ? "warn" : "ok",
      detail:
        `started and answered ${connection.era === "modern" ? "server/discover" : "initialize"} in ${ms} ms: ` +
        `${connection.tools.length} tool(s)` +
        (info ? `; it is ${info.name} ${info.version}` : "") +
        (protocol ? `, protocol ${protocol} (${connection.era} era)` : "") +
        (connection.skipped.length > 0 ? `; ${connection.skipped.length} malformed tool(s) left out` : "") +
        (server.lazy ? "; lazy: serve starts it on the first call that needs it" : ""),
      ...(connection.tools.length === 0
        ? { fix: "it offers no tools, so the agent will not find anything from it" }
        : {}),
    };
  } catch (error) {
    if (isLoginNeeded(error)) {
      return {
        area: "server",
        subject,
        status: "fail",
        detail: "needs-login: it asks for an OAuth login, and mcpproxy has no valid token for it",
        fix: `run \`mcpproxy auth login ${server.name}\`; a running serve picks the login up without a restart`,
      };
    }
    return {
      area: "server",
      subject,
      status: "fail",
      detail: describeError(error),
      fix: failureFix(server, error),
    };
  }
}

/** An error as one line: a ProxyError's message and its details (each problem it lists). */
function problemText(error: unknown): string {
  return isProxyError(error)
    ? [error.message.replace(/[.;:\s]+$/, ""), ...error.details].join("; ")
    : describeError(error);
}

async function checkEmbedder(config: ResolvedConfig, findings: Findings): Promise<void> {
  try {
    const embedder = await createEmbedder(config);
    await embedder?.close?.();
    findings.push({
      area: "embedder",
      subject: config.embedder,
      status: "ok",
      detail: embedder ? `${embedder.id}, ${embedder.dimensions} dimensions` : "BM25 only (no model needed)",
    });
  } catch (error) {
    findings.push({
      area: "embedder",
      subject: config.embedder,
      status: "fail",
      detail: describeError(error),
      fix: isProxyError(error) ? error.details.join("; ") || "see the message" : "see the message",
    });
  }
}

async function checkPlugins(config: ResolvedConfig, findings: Findings): Promise<void> {
  if (config.plugins.length === 0) {
    findings.push({ area: "plugins", subject: "plugins", status: "info", detail: "none configured" });
    return;
  }
  try {
    const loaded = await loadPlugins(config.plugins, {
      strict: true,
      logger: createLogger({ level: "error" }),
    });
    findings.push({
      area: "plugins",
      subject: "plugins",
      status: "ok",
      detail: `${loaded.length} loaded: ${loaded.map((entry) => entry.plugin.name).join(", ")}`,
    });
  } catch (error) {
    findings.push({
      area: "plugins",
      subject: "plugins",
      status: "fail",
      detail: problemText(error),
      fix: "fix or remove the plugin named above",
    });
  }
}

function checkClients(options: DoctorOptions, findings: Findings): void {
  const environment = { env: options.env, cwd: options.cwd, platform: process.platform };
  let imported = new Set<string>();
  try {
    const configPath = locateConfig(options.configFlag, options.env, options.cwd).path;
    imported = new Set(Object.values(readConfigServers(configPath).servers).map(identityOf));
  } catch {
    // A config that does not read is reported by checkConfig.
  }
  for (const client of CLIENT_IDS) {
    for (const file of existingFiles(clientFiles(client, environment))) {
      const read = readClientFile(file, options.cwd);
      const subject = `${CLIENT_NAMES[client]}${file.scope === "project" ? " (project)" : ""}`;
      if (read.problem) {
        findings.push({ area: "client", subject, status: "warn", detail: `${file.path} ${read.problem}` });
        continue;
      }
      if (read.servers.length === 0) continue;
      const usesProxy = read.servers.some(({ entry }) => isMcpproxyEntry(entry));
      const own = read.servers.length - (usesProxy ? 1 : 0);
      if (usesProxy && own === 0) {
        findings.push({ area: "client", subject, status: "ok", detail: `${file.path} uses mcpproxy` });
        continue;
      }
      // Its servers that mcpproxy's config does not have yet (the same command line or URL).
      const notImported = read.servers.filter((raw) => {
        const server = normalizeServer(file, raw, read.inputs, homeDir(options.env), options.env);
        return "entry" in server && !imported.has(identityOf(server.entry));
      });
      findings.push({
        area: "client",
        subject,
        status: "info",
        detail:
          `${file.path} ${usesProxy ? "uses mcpproxy and also" : "does not use mcpproxy; it"} lists ${own} server(s) of its own` +
          (notImported.length === 0
            ? ", all of them in mcpproxy's config already"
            : `, ${notImported.length} not imported`),
        fix:
          notImported.length === 0
            ? "replace them with the entry `mcpproxy import --snippet` prints"
            : `\`mcpproxy import --from ${client}\`, then \`mcpproxy import --snippet\` for the entry that replaces them`,
      });
    }
  }
}
