import { createAccessTokens } from "../auth/resource/access-token.ts";
import type { ResolvedConfig } from "../config/load-config.ts";
import type { Logger } from "../log.ts";
import type { SessionRegistry } from "../routing/session-registry.ts";
import type { ChangeFeed } from "../server/federation/change-feed.ts";
import type { ProxyServerDeps } from "../server/proxy-deps.ts";
import { createProxyServer } from "../server/proxy-server.ts";
import { isTokenRequired, loadOrCreateToken } from "../server/transport/bearer-token.ts";
import { createHttpApp } from "../server/transport/http-app.ts";
import { startHttpServer } from "../server/transport/http-server.ts";
import type { ListenAdmission } from "../server/transport/listen-admission.ts";
import { startStdioServer } from "../server/transport/stdio-server.ts";
import type { Ancestry } from "../upstream/proxy-ancestry.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
import type { CleanupStack } from "./cleanup-stack.ts";
import { healthReport } from "./health.ts";
import { type servedProfiles, statusSources } from "./profile-endpoints.ts";

/**
 * The half of `serve` that faces the clients, once the proxy is assembled (serve-proxy.ts): over
 * stdio one client per process, whose leaving ends serve; over HTTP the app with its door (the
 * data dir's token or an issuer's access tokens), every profile's endpoint, and the URLs logged.
 */

/** Said once when someone starts `serve` by hand on a terminal, where stdio MCP looks like a hang. */
const TERMINAL_HINT =
  "mcpproxy serve speaks MCP (JSON-RPC) on stdin/stdout, for an MCP client to start it: " +
  'give your client {"command": "mcpproxy", "args": ["serve"]}, try it with ' +
  "`npx @modelcontextprotocol/inspector mcpproxy serve`, or use --transport http. Ctrl-C stops it.\n";

/** Over stdio, the upstreams start at the first request other than server/discover, or after this long. */
const QUIET_START_MS = 3_000;

export interface ServedClients {
  config: ResolvedConfig;
  deps: ProxyServerDeps;
  profiles: ReturnType<typeof servedProfiles>;
  /** `serve --profile NAME` over stdio. */
  profile: string | undefined;
  changes: ChangeFeed;
  listens: ListenAdmission;
  listensOver: (pool: UpstreamPool) => ListenAdmission;
  /** Connects the upstreams and starts the first indexing pass (once; later calls do nothing). */
  startUpstreams: () => void;
  sessions: SessionRegistry;
  ancestry: Ancestry;
  isDataDirWritable: boolean;
  savedTools: number;
  cleanup: CleanupStack;
  logger: Logger;
}

/**
 * Serves the clients; resolves once they are served, with `clientGone`, which settles when the
 * stdio client leaves (never over HTTP, where serve ends on a signal).
 */
export async function serveClients(served: ServedClients): Promise<{ clientGone: Promise<unknown> }> {
  const { config, deps, profiles, profile, changes, listens, listensOver, startUpstreams, sessions } = served;
  const { ancestry, isDataDirWritable, savedTools, cleanup, logger } = served;
  const routing = config.routing === "call-tool" ? "" : `; ${config.routing} routing`;
  if (config.transport === "stdio") {
    const scope = profile !== undefined ? profiles.depsOf(profile) : deps;
    // One client per process: what it is told is told to no one else.
    const stdio = startStdioServer((era) => createProxyServer(scope, era, "everyone"), {
      maxRequestBytes: config.maxRequestBytes,
      logger,
      onRequest: (method) => {
        if (method !== "server/discover") startUpstreams();
      },
      changes,
      listens: profile !== undefined ? listensOver(scope.pool) : listens,
    });
    // A client slow to send its first request (or serve started by hand) still gets its servers
    // started in the background; a probe's throw-away process is gone long before this.
    const quiet = setTimeout(startUpstreams, QUIET_START_MS);
    cleanup.defer("stop waiting for the first request", () => clearTimeout(quiet));
    cleanup.defer("stop the stdio server", () => stdio.close());
    const scoped = profile !== undefined ? ` (profile ${profile})` : "";
    logger.info(`serving MCP over stdio${scoped}; ${savedTools} tools in the saved index${routing}`);
    if (process.stdin.isTTY) process.stderr.write(TERMINAL_HINT);
    return { clientGone: stdio.closed };
  }
  startUpstreams();
  // Access tokens of an issuer (mcpproxy.httpAuth) replace the static token of the data dir.
  const httpAuth = config.httpAuth
    ? { settings: config.httpAuth, tokens: createAccessTokens(config.httpAuth) }
    : undefined;
  const token =
    !httpAuth && isTokenRequired(config.host, config.requireToken)
      ? await loadOrCreateToken(config.dataDir, { mayCreate: isDataDirWritable })
      : undefined;
  if (token)
    logger.info(`HTTP clients must send "Authorization: Bearer <token>"; the token is in ${token.path}`);
  if (httpAuth)
    logger.info(
      `HTTP clients must send an access token (JWT) of ${httpAuth.settings.issuer} for ${httpAuth.settings.audience}`,
    );
  const app = createHttpApp({
    token: token?.token,
    httpAuth,
    metrics: deps.observe?.metrics,
    status: statusSources(deps, config),
    profiles: profiles.endpoints(),
    bindHost: config.host,
    logger,
    createServer: (era, audience) => createProxyServer(deps, era, audience),
    changes,
    listens,
    keepAliveMs: config.listenKeepAliveMs,
    health: (openSessions) =>
      healthReport(deps.catalog, deps.pool, { registry: sessions, open: openSessions }),
    ancestry,
    configPath: config.configPath,
    limits: {
      maxRequestBytes: config.maxRequestBytes,
      bodyTimeoutMs: config.bodyTimeoutMs,
      // One whole result may wait for a slow client; more than that, and it is not reading.
      maxBufferedBytes: config.maxResultBytes + 1024 * 1024,
      maxSessions: config.maxSessions,
      sessionIdleMs: config.sessionIdleMs,
    },
  });
  const http = startHttpServer(app, config.host, config.port, config.maxRequestBytes);
  cleanup.defer("stop the HTTP server", () => http.close());
  const origin = http.url.replace(/\/mcp$/, "");
  logger.info(
    `serving MCP at ${http.url}; legacy SSE clients at ${origin}/sse; ` +
      `${savedTools} tools in the saved index${routing}`,
  );
  // Each profile's endpoint, beside the main one: the URL a person hands that profile's clients.
  for (const name of Object.keys(config.profiles))
    logger.info(`serving the profile ${name} at ${http.url}/p/${name} (status page ${origin}/p/${name}/)`);
  // Over HTTP the clients come and go; serve ends on a signal.
  return { clientGone: new Promise(() => {}) };
}
