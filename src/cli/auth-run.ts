import { login } from "../auth/login-flow.ts";
import { currentCredentials, type OAuthStore, openOAuthStore } from "../auth/oauth-store.ts";
import { sharedOAuthStore } from "../auth/shared-oauth-store.ts";
import { usesOAuth } from "../auth/upstream-auth.ts";
import type { ResolvedConfig } from "../config/load-config.ts";
import type { HttpServerConfig } from "../config/parse-server.ts";
import { ProxyError } from "../errors.ts";
import { openBrowser } from "../open-browser.ts";
import { launchRefusal } from "../security/launch-spec.ts";
import { openSharedOAuthRecords } from "../store/oauth-records.ts";
import { serverRegistryOf } from "../store/server-registry.ts";
import type { CommandValues } from "./command.ts";
import { commandLogger, loadCommandConfig } from "./command-config.ts";
import { registryConfig, storeOverrides, withCommandStore } from "./command-store.ts";

/** `mcpproxy auth`: what it does once its flags are parsed (its flags and help: auth-command.ts). */
export async function runAuthCommand(values: CommandValues, positionals: string[]): Promise<number> {
  const [action, name, ...extra] = positionals;
  if (extra.length > 0) throw new ProxyError("USAGE", `auth ${action} takes one SERVER name.`);
  const overrides = storeOverrides(values);
  const fileConfig = loadCommandConfig(values, overrides);
  return withCommandStore(fileConfig, async (store) => {
    // With a store, the servers are its registry's and the logins its own.
    const config = store
      ? (
          await registryConfig(serverRegistryOf(store), fileConfig, (text) =>
            loadCommandConfig(values, overrides, text),
          )
        ).config
      : fileConfig;
    const records = store ? await openSharedOAuthRecords(store, commandLogger(config)) : undefined;
    const storeOf = (server: HttpServerConfig): OAuthStore =>
      records
        ? sharedOAuthStore(records, server.name, server.url)
        : openOAuthStore(config.dataDir, server.name, server.url);
    try {
      return await runAction(action, name, config, storeOf, Boolean(values.json));
    } finally {
      // Written before the command ends: a login kept nowhere else must reach the store.
      await records?.flush();
      records?.stop();
    }
  });
}

async function runAction(
  action: string | undefined,
  name: string | undefined,
  config: ResolvedConfig,
  storeOf: (server: HttpServerConfig) => OAuthStore,
  json: boolean,
): Promise<number> {
  switch (action) {
    case "login": {
      const server = oauthServer(config, name, "login");
      return runLogin(config, server, storeOf(server));
    }
    case "logout": {
      const server = oauthServer(config, name, "logout");
      const cleared = storeOf(server).clear();
      process.stdout.write(
        cleared
          ? `Logged out of ${server.name}: its tokens and client registration are deleted.\n`
          : `${server.name} had no login.\n`,
      );
      return 0;
    }
    case "status":
      return runStatus(config, name, json, storeOf);
    default:
      throw new ProxyError(
        "USAGE",
        `auth needs an action: login SERVER, status [SERVER] or logout SERVER (got ${action ?? "nothing"}).`,
      );
  }
}

function oauthServer(config: ResolvedConfig, name: string | undefined, action: string): HttpServerConfig {
  if (!name) throw new ProxyError("USAGE", `auth ${action} needs a SERVER name from the config.`);
  const server = config.servers.find((s) => s.name === name);
  if (!server) {
    throw new ProxyError(
      "USAGE",
      `No server named ${name} in ${config.configPath ?? "the config"}. Servers: ${config.servers.map((s) => s.name).join(", ") || "none"}.`,
    );
  }
  if (!usesOAuth(server)) {
    throw new ProxyError(
      "USAGE",
      server.transport === "stdio"
        ? `${name} is a local (stdio) server: OAuth is for remote servers.`
        : `${name} does not use OAuth here: it sends its own Authorization header, or has "oauth": false.`,
    );
  }
  return server;
}

async function runLogin(
  config: ResolvedConfig,
  server: HttpServerConfig,
  store: OAuthStore,
): Promise<number> {
  // A login connects to the server: not before a person approved what an agent wrote.
  const refusal = launchRefusal(server);
  if (refusal) throw new ProxyError("AWAITING_APPROVAL", refusal);
  const outcome = await login({
    server,
    dataDir: config.dataDir,
    store,
    notify(message) {
      process.stderr.write(`${message}\n`);
    },
    async open(url) {
      const opened = await openBrowser(url.href);
      process.stderr.write(
        opened
          ? `Opened the browser to log in to ${server.name}. If it did not open, visit:\n  ${url.href}\n`
          : `Open this URL in a browser to log in to ${server.name}:\n  ${url.href}\n`,
      );
      process.stderr.write("Waiting for the login to finish...\n");
    },
  });
  process.stdout.write(
    outcome === "logged-in"
      ? `Logged in to ${server.name}. A running mcpproxy connects to it within a second.\n`
      : `${server.name} answered without asking for a login: nothing to do.\n`,
  );
  return 0;
}

function runStatus(
  config: ResolvedConfig,
  name: string | undefined,
  json: boolean,
  storeOf: (server: HttpServerConfig) => OAuthStore,
): number {
  const servers = config.servers.filter(
    (server): server is HttpServerConfig => usesOAuth(server) && (!name || server.name === name),
  );
  if (name && servers.length === 0) oauthServer(config, name, "status");
  const now = Date.now();
  const rows = servers.map((server) => {
    const record = storeOf(server).load();
    const credentials = currentCredentials(record);
    const tokens = credentials?.tokens;
    const expiresAt = credentials?.expiresAt;
    const expired = expiresAt !== undefined && expiresAt <= now;
    const state = !tokens ? "not logged in" : expired && !tokens.refresh_token ? "expired" : "logged in";
    return {
      server: server.name,
      url: server.url,
      state,
      ...(tokens && record.current ? { issuer: record.current } : {}),
      ...(expiresAt !== undefined ? { expiresAt: new Date(expiresAt).toISOString() } : {}),
      refreshable: Boolean(tokens?.refresh_token),
      ...(tokens?.scope ? { scope: tokens.scope } : {}),
    };
  });
  if (json) {
    process.stdout.write(`${JSON.stringify({ servers: rows }, null, 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    process.stdout.write("No remote server in the config uses OAuth.\n");
    return 0;
  }
  for (const row of rows) {
    const expiry = row.expiresAt
      ? `; access token ${row.expiresAt < new Date(now).toISOString() ? "expired" : "expires"} ${row.expiresAt}${row.refreshable ? " (refreshed automatically)" : ""}`
      : "";
    process.stdout.write(
      `${row.server}: ${row.state}${row.state === "logged in" ? expiry : ` (run \`mcpproxy auth login ${row.server}\`)`}${row.scope ? `; scope ${row.scope}` : ""}${row.issuer ? `; authorization server ${row.issuer}` : ""}\n`,
    );
  }
  return 0;
}
