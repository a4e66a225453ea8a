import { createAccessTokens } from "../auth/resource/access-token.ts";
import type { ResolvedConfig } from "../config/load-config.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import { createConsole } from "../console/console-routes.ts";
import { consoleSources } from "../console/console-sources.ts";
import { failureFix } from "../doctor/server-hints.ts";
import type { RetrieveToolsResult } from "../index/retrieve-tools.ts";
import type { Logger } from "../log.ts";
import type { SessionRegistry } from "../routing/session-registry.ts";
import type { ChangeFeed } from "../server/federation/change-feed.ts";
import type { ProxyServerDeps } from "../server/proxy-deps.ts";
import { createProxyServer } from "../server/proxy-server.ts";
import { isTokenRequired, loadOrCreateToken } from "../server/transport/bearer-token.ts";
import { createHttpApp } from "../server/transport/http-app.ts";
import { startHttpServer } from "../server/transport/http-server.ts";
import type { ListenAdmission } from "../server/transport/listen-admission.ts";
import type { ServerRegistry } from "../store/server-registry.ts";
import type { ClientPriority } from "../upstream/client-priority.ts";
import type { ServerStatus } from "../upstream/pool-types.ts";
import type { Ancestry } from "../upstream/proxy-ancestry.ts";
import type { CleanupStack } from "./cleanup-stack.ts";
import { consoleLogin } from "./console-login.ts";
import { healthReport } from "./health.ts";
import { type servedProfiles, statusSources } from "./profile-endpoints.ts";

/**
 * `serve` over HTTP, once the proxy is assembled: the app with its door (the data dir's token or an
 * issuer's access tokens), every profile's endpoint, and the URLs logged. A module of its own, loaded
 * only by a serve that listens (serve-clients.ts): Hono, jose and the status pages stay out of stdio.
 */

/** What the clients' half of serve is handed (serve-clients.ts adds what stdio alone needs). */
export interface HttpClients {
  config: ResolvedConfig;
  deps: ProxyServerDeps;
  profiles: ReturnType<typeof servedProfiles>;
  changes: ChangeFeed;
  listens: ListenAdmission;
  /** Connects the upstreams and starts the first indexing pass (once; later calls do nothing). */
  startUpstreams: () => void;
  /** Told of each client request: the first pass over the servers gives way (client-priority.ts). */
  clientPriority: ClientPriority;
  sessions: SessionRegistry;
  ancestry: Ancestry;
  isDataDirWritable: boolean;
  savedTools: number;
  cleanup: CleanupStack;
  logger: Logger;
  /** Told the MCP endpoint's URL once it listens. */
  onListening?: ((url: string) => void) | undefined;
  /** The file the log goes to, which the console tails; unset when it goes to a terminal. */
  logPath?: string | undefined;
  /** The shared store's server registry, where approvals of launch specs are written. */
  registry?: ServerRegistry | undefined;
  /** The servers as they apply now. */
  configured: () => readonly ServerConfig[];
}

/** Serves the HTTP clients; the promise it resolves with never settles: serve ends on a signal. */
export async function serveHttp(
  served: HttpClients,
  /** What the log line says of the routing ("; dynamic routing"), as over stdio. */
  routing: string,
): Promise<{ clientGone: Promise<unknown> }> {
  const { config, deps, profiles, changes, listens, startUpstreams, sessions } = served;
  const { ancestry, isDataDirWritable, savedTools, cleanup, logger } = served;
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
  const status = statusSources(deps, config);
  const consoleApp = createConsole(
    consoleSources({
      config,
      configured: served.configured,
      servers: () => deps.pool.status(),
      hintFor: (status) => hintFor(served.configured(), status),
      catalog: deps.catalog,
      editor: deps.servers && !deps.servers.readOnly ? deps.servers.manager : undefined,
      registry: served.registry,
      stats: deps.observe?.stats ? () => deps.observe!.stats!.all() : undefined,
      searches: searchesOf(status, profiles.endpoints()),
      logPath: served.logPath,
      login: consoleLogin(
        { dataDir: config.dataDir, servers: served.configured, isTeam: served.registry !== undefined },
        logger.child("console"),
      ),
      isPaused: () => deps.pool.isPaused(),
      setPaused: (paused) => deps.pool.setPaused(paused),
      // As `mcpproxy stop` ends the service: the signal serve already answers (stop-signals.ts).
      stop: () => setTimeout(() => process.kill(process.pid, "SIGTERM"), 100),
      logger: logger.child("console"),
    }),
  );
  cleanup.defer("stop the console", () => consoleApp.close());
  const app = createHttpApp({
    console: consoleApp,
    admits: consoleApp.admits,
    token: token?.token,
    httpAuth,
    metrics: deps.observe?.metrics,
    status,
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
  const requests = {
    ...app,
    fetch: (request: Request, server?: unknown) => {
      served.clientPriority.requested();
      return app.fetch(request, server);
    },
  };
  const http = startHttpServer(requests, config.host, config.port, config.maxRequestBytes);
  cleanup.defer("stop the HTTP server", () => http.close());
  const origin = http.url.replace(/\/mcp$/, "");
  logger.info(
    `serving MCP at ${http.url}; legacy SSE clients at ${origin}/sse; ` +
      `${savedTools} tools in the saved index${routing}`,
  );
  // Each profile's endpoint, beside the main one: the URL a person hands that profile's clients.
  for (const name of Object.keys(config.profiles))
    logger.info(`serving the profile ${name} at ${http.url}/p/${name} (status page ${origin}/p/${name}/)`);
  served.onListening?.(http.url);
  // Over HTTP the clients come and go; serve ends on a signal.
  return { clientGone: new Promise(() => {}) };
}

/** What doctor would say to do about a server's error (doctor/server-hints.ts). */
function hintFor(servers: readonly ServerConfig[], status: ServerStatus): string | undefined {
  const server = servers.find((s) => s.name === status.name);
  return server && status.error && status.state !== "connected"
    ? failureFix(server, status.error)
    : undefined;
}

/** `retrieve_tools` of the whole proxy ("") and of each profile, for the console's search. */
function searchesOf(
  whole: { search(query: string): Promise<RetrieveToolsResult> },
  endpoints: ReadonlyMap<
    string,
    { status?: { search(query: string): Promise<RetrieveToolsResult> } | undefined }
  >,
): Map<string, (query: string) => Promise<RetrieveToolsResult>> {
  const searches = new Map<string, (query: string) => Promise<RetrieveToolsResult>>([["", whole.search]]);
  for (const [name, endpoint] of endpoints) {
    const status = endpoint.status;
    if (status) searches.set(name, (query) => status.search(query));
  }
  return searches;
}
