import { createHash } from "node:crypto";
import type { AuthInfo, Server } from "@modelcontextprotocol/server";
import {
  isInitializeRequest,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { type Context, Hono } from "hono";
import { cors } from "hono/cors";
import type { AccessTokens } from "../../auth/resource/access-token.ts";
import type { ResolvedHttpAuth } from "../../config/http-auth-config.ts";
import { describeError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import type { Ancestry } from "../../upstream/proxy-ancestry.ts";
import type { Audience } from "../cache-hints.ts";
import type { ClientEra } from "../client-era.ts";
import type { ChangeFeed } from "../federation/change-feed.ts";
import { type HealthAnswer, serveHealth } from "../observe/health-route.ts";
import type { ProxyMetrics } from "../observe/metrics.ts";
import { renderStatusPage, type StatusSources } from "../observe/status-page.ts";
import { bearerToken } from "./bearer-token.ts";
import { hostGuard } from "./host-guard.ts";
import { type HttpLimits, readBodyText } from "./http-limits.ts";
import { createHttpSessions, type HttpSessions } from "./http-sessions.ts";
import type { ListenAdmission } from "./listen-admission.ts";
import { loopGuard } from "./loop-guard.ts";
import { createMcpEndpoint, type McpEndpoint } from "./modern-endpoint.ts";
import { authInfoOf, principalOfRequest, requirePrincipal, serveResourceMetadata } from "./resource-guard.ts";
import { WebSseServerTransport } from "./sse-transport.ts";

/**
 * The HTTP face of the proxy: MCP at /mcp in both revisions (and each profile's at /mcp/p/<name>,
 * with its status page at /p/<name>/), the legacy SSE transport at /sse
 * (+ /messages) for old clients, /health for probes, and the DNS-rebinding guard in front of
 * everything. At /mcp a request that carries the 2026-07-28 `_meta` envelope is served statelessly
 * (one MCP server per request, by the SDK's createMcpHandler, which also answers every modern
 * protocol error and serves `subscriptions/listen` streams); `initialize` and requests of an open
 * session are served in that session, as before (one MCP server per session). Bodies, sessions and
 * streams are bounded (http-limits.ts, http-sessions.ts); modern requests in flight, listen streams
 * included, count against `maxSessions` too.
 */
export interface HttpAppOptions {
  bindHost: string;
  logger: Logger;
  /** `audience`: who the endpoint it answers at serves (cache-hints.ts). */
  createServer: (era: ClientEra, audience: Audience) => Server;
  /** The /health answer and its HTTP status (health-route.ts says who is told what). */
  health: (openSessions: () => number) => HealthAnswer;
  /** This proxy's place in a chain of proxies; requests from a chain it is already in are refused. */
  ancestry?: Ancestry | undefined;
  configPath?: string;
  limits: HttpLimits & { maxSessions: number; sessionIdleMs: number };
  /** When set, every request needs `Authorization: Bearer <token>` (bearer-token.ts). */
  token?: string | undefined;
  /**
   * `mcpproxy.httpAuth`: every request needs a JWT access token (resource-guard.ts), and `token`
   * is not asked. Each request's principal is its caller; one whose access rule names a profile is
   * served that profile at /mcp and /sse, and no other.
   */
  httpAuth?: { settings: ResolvedHttpAuth; tokens: AccessTokens } | undefined;
  /** When set (`mcpproxy.metrics`), `/metrics` answers in the Prometheus text format. */
  metrics?: ProxyMetrics | undefined;
  /** The status page at `/` (status-page.ts). */
  status?: StatusSources | undefined;
  /** Where the modern listen streams hear of changes (the handler's `notify` is attached). */
  changes?: ChangeFeed | undefined;
  /** Holds each listen stream's resource subscriptions until it ends. */
  listens?: ListenAdmission | undefined;
  /** How often a quiet listen stream gets a keep-alive comment, in ms (the SDK's 15 s by default). */
  keepAliveMs?: number | undefined;
  /** Profiles (`mcpproxy.profiles`) by name: each served at /mcp/p/<name>, its status page at /p/<name>/. */
  profiles?: ReadonlyMap<string, ProfileEndpoint> | undefined;
}

/** What one profile's endpoint serves: its own MCP servers, listen streams and status page. */
export interface ProfileEndpoint {
  createServer: (era: ClientEra, audience: Audience) => Server;
  listens?: ListenAdmission | undefined;
  status?: StatusSources | undefined;
  /** Its servers' /health, for a principal an access rule confines to it. */
  health?: (() => HealthAnswer) | undefined;
}

export interface HttpApp {
  fetch: (request: Request, server?: unknown) => Response | Promise<Response>;
  /** Ends every open MCP session. */
  close(): Promise<void>;
  sessionCount(): number;
}

/** What /metrics answers while metrics are off. */
const METRICS_OFF =
  'Not found: /metrics is off. Turn it on with "mcpproxy": {"metrics": true} in the config file ' +
  "(or MCPPROXY_METRICS=1) and restart mcpproxy serve";

const jsonRpcError = (message: string, code = -32000) => ({
  jsonrpc: "2.0",
  error: { code, message },
  id: null,
});

/** MCP requests may stay open for as long as a tool runs: Bun's idle timeout is for the rest. */
function keepOpen(c: Context): void {
  const server = c.env as { timeout?: (request: Request, seconds: number) => void } | undefined;
  server?.timeout?.(c.req.raw, 0);
}

type Transport = WebStandardStreamableHTTPServerTransport | WebSseServerTransport;

export function createHttpApp(options: HttpAppOptions): HttpApp {
  const { limits } = options;
  // Who calls, as the requestState of an input round is bound to it (input-rounds.ts): the holder of
  // the bearer token, named by its digest (the token itself goes nowhere past the check).
  const authInfo: AuthInfo | undefined =
    options.token && !options.httpAuth
      ? {
          token: "",
          clientId: `bearer:${createHash("sha256").update(options.token).digest("base64url").slice(0, 22)}`,
          scopes: [],
        }
      : undefined;
  /** Who sent a request: the access token's principal, else the bearer token's holder (or nobody). */
  const authOf = (c: Context): AuthInfo | undefined => {
    const principal = principalOfRequest(c.req.raw);
    return principal ? authInfoOf(principal) : authInfo;
  };
  /** The profile an access rule confines the request's principal to, if any. */
  const confinedTo = (c: Context) => principalOfRequest(c.req.raw)?.rule.profile;
  /** The principal that opened each session (legacy HTTP and SSE): no other may use it. */
  const sessionOwner = new WeakMap<object, string | undefined>();
  const ownerOf = (c: Context) => authOf(c)?.clientId;
  const forbidden = (c: Context, profile: string) =>
    c.json(
      jsonRpcError(
        `Forbidden: your access rule (mcpproxy.httpAuth.access) gives you the profile ${profile} only`,
      ),
      403,
    );
  const sessions: HttpSessions<Transport> = createHttpSessions({
    maxSessions: limits.maxSessions,
    idleMs: limits.sessionIdleMs,
    maxBufferedBytes: limits.maxBufferedBytes,
    logger: options.logger,
  });
  const sweeper = setInterval(
    () => void sessions.sweep(),
    Math.min(30_000, Math.max(1_000, limits.sessionIdleMs / 4)),
  );
  sweeper.unref?.();
  const full = (c: Context) => {
    c.header("Retry-After", "30");
    return c.json(
      jsonRpcError(
        `Too many open sessions (${limits.maxSessions}, MCPPROXY_MAX_SESSIONS); try again shortly`,
      ),
      503,
    );
  };

  const app = new Hono();
  app.use("*", hostGuard({ bindHost: options.bindHost }));
  if (options.ancestry) app.use("*", loopGuard(options.ancestry, options.configPath ?? "(unknown)"));
  // Browser-based local clients (inspectors, web UIs) need CORS. Only origins the guard above let
  // through ever get here, so reflecting the origin grants nothing to a foreign page.
  app.use(
    "*",
    cors({
      origin: (origin) => origin,
      allowMethods: ["GET", "POST", "DELETE", "OPTIONS"],
      allowHeaders: [
        "content-type",
        "accept",
        "authorization",
        "mcp-session-id",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "last-event-id",
        "traceparent",
        "tracestate",
      ],
      exposeHeaders: ["mcp-session-id", "mcp-protocol-version"],
    }),
  );
  const httpAuth = options.httpAuth;
  if (httpAuth) {
    serveResourceMetadata(app, httpAuth.settings);
    app.use("*", requirePrincipal(httpAuth.settings, httpAuth.tokens, options.logger));
  } else if (options.token) app.use("*", bearerToken(options.token));

  serveHealth(app, {
    whole: () => options.health(() => sessions.size),
    profile: (name) => options.profiles?.get(name)?.health?.(),
    accessTokens: httpAuth !== undefined,
  });

  const status = options.status;
  if (status) {
    app.get("/", async (c) => {
      const profile = confinedTo(c);
      if (profile !== undefined) return forbidden(c, profile);
      return c.html(await renderStatusPage(status, c.req.query("q")));
    });
  }

  const metrics = options.metrics;
  if (metrics) {
    app.get("/metrics", async (c) => {
      const profile = confinedTo(c);
      if (profile !== undefined) return forbidden(c, profile);
      return new Response(await metrics.text(), { headers: { "content-type": metrics.contentType } });
    });
  } else {
    // A scraper pointed here before metrics were turned on: say how, rather than a bare 404.
    app.get("/metrics", (c) => c.json({ error: METRICS_OFF }, 404));
  }

  /** Modern requests in flight on every endpoint (listen streams included). */
  const modernInFlight = { count: 0 };
  /** An MCP endpoint (modern-endpoint.ts); legacy sessions stay with the one that opened them. */
  const endpointOf = (key: string, createServer: (era: ClientEra) => Server, listens?: ListenAdmission) =>
    createMcpEndpoint({
      key,
      createServer,
      listens,
      changes: options.changes,
      maxSubscriptions: limits.maxSessions,
      keepAliveMs: options.keepAliveMs,
      logger: options.logger,
      inFlight: modernInFlight,
    });
  /** The endpoint that opened each legacy session: elsewhere its id is not found, so it cannot cross profiles. */
  const sessionEndpoint = new WeakMap<object, McpEndpoint>();
  /**
   * Who /mcp answers. While an access rule names a profile, a principal it admits is served that
   * profile at /mcp and everyone else the whole proxy: answers there differ by caller, so none may
   * be shared between users (cache-hints.ts). A profile's own /mcp/p/<name> answers everyone alike.
   */
  const confining = new Set(options.httpAuth?.settings.access.map((rule) => rule.profile));
  confining.delete(undefined);
  const atMcp: Audience = confining.size > 0 ? "each-principal" : "everyone";
  const main = endpointOf("/mcp", (era) => options.createServer(era, atMcp), options.listens);
  const endpoints: McpEndpoint[] = [main];
  const profileEndpoints = new Map<string, McpEndpoint>();
  /** Each profile a rule names, as the principals it confines are served it at /mcp. */
  const confinedEndpoints = new Map<string, McpEndpoint>();
  for (const [name, profile] of options.profiles ?? []) {
    const own = endpointOf(`/mcp/p/${name}`, (era) => profile.createServer(era, "everyone"), profile.listens);
    profileEndpoints.set(name, own);
    endpoints.push(own);
    if (!confining.has(name)) continue;
    const atMain = endpointOf("/mcp", (era) => profile.createServer(era, atMcp), profile.listens);
    confinedEndpoints.set(name, atMain);
    endpoints.push(atMain);
  }
  const knownProfiles = () =>
    profileEndpoints.size > 0 ? [...profileEndpoints.keys()].join(", ") : "none (mcpproxy.profiles is empty)";

  const serveMcp = async (c: Context, endpoint: McpEndpoint) => {
    keepOpen(c);
    const auth = authOf(c);
    const sessionId = c.req.header("mcp-session-id");
    let parsedBody: unknown;
    if (c.req.method === "POST") {
      const body = await readBodyText(c.req.raw, limits);
      if (!body.ok) return c.json(jsonRpcError(`Request refused: ${body.message}`, -32600), body.status);
      try {
        parsedBody = JSON.parse(body.text);
      } catch {
        return c.json(jsonRpcError("Parse error: the body is not JSON", -32700), 400);
      }
    }
    const handle = (transport: WebStandardStreamableHTTPServerTransport) =>
      transport.handleRequest(c.req.raw, {
        ...(parsedBody === undefined ? {} : { parsedBody }),
        ...(auth ? { authInfo: auth } : {}),
      });
    if (sessionId) {
      const transport = sessions.get(sessionId);
      if (
        !(transport instanceof WebStandardStreamableHTTPServerTransport) ||
        sessionEndpoint.get(transport) !== endpoint ||
        sessionOwner.get(transport) !== auth?.clientId
      )
        return c.json(jsonRpcError("Session not found: start a new one with initialize", -32001), 404);
      return sessions.respond(
        () => sessionId,
        () => handle(transport),
      );
    }
    // GET and DELETE belong to a legacy session; without one there is nothing to stream or end.
    if (c.req.method !== "POST") {
      c.header("Allow", "POST");
      return c.json(
        jsonRpcError(
          `Method Not Allowed: without an Mcp-Session-Id, ${endpoint.key} takes POST (2026-07-28 requests, or initialize)`,
        ),
        405,
      );
    }
    if (!(await isLegacyRequest(c.req.raw, parsedBody))) {
      if (modernInFlight.count >= limits.maxSessions) return full(c);
      return endpoint.serveModern(c.req.raw, parsedBody, auth);
    }
    const isInit = Array.isArray(parsedBody)
      ? parsedBody.some(isInitializeRequest)
      : isInitializeRequest(parsedBody);
    if (!isInit)
      return c.json(jsonRpcError("Bad Request: send initialize first (no Mcp-Session-Id header)"), 400);
    if (sessions.isFull()) return full(c);

    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => sessions.add(id, transport),
      onsessionclosed: (id) => sessions.delete(id),
    });
    sessionEndpoint.set(transport, endpoint);
    sessionOwner.set(transport, auth?.clientId);
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await endpoint.createServer("legacy").connect(transport);
    return sessions.respond(
      () => transport.sessionId,
      () => handle(transport),
    );
  };

  /** The endpoint a request to /mcp or /sse is served by: its principal's profile's, else the whole proxy's. */
  const endpointFor = (c: Context) => {
    const profile = confinedTo(c);
    return profile === undefined ? main : (confinedEndpoints.get(profile) ?? main);
  };
  app.all("/mcp", (c) => serveMcp(c, endpointFor(c)));
  app.all("/mcp/p/:profile", async (c) => {
    const confined = confinedTo(c);
    if (confined !== undefined && confined !== c.req.param("profile")) return forbidden(c, confined);
    const endpoint = profileEndpoints.get(c.req.param("profile"));
    if (!endpoint)
      return c.json(
        jsonRpcError(
          `Unknown profile ${c.req.param("profile")}: the profiles are ${knownProfiles()}`,
          -32001,
        ),
        404,
      );
    return serveMcp(c, endpoint);
  });
  for (const [name, profile] of options.profiles ?? []) {
    const sources = profile.status;
    if (sources)
      app.get(`/p/${name}/`, async (c) => {
        const confined = confinedTo(c);
        if (confined !== undefined && confined !== name) return forbidden(c, confined);
        return c.html(await renderStatusPage(sources, c.req.query("q"), name));
      });
  }
  app.get("/p/:profile/*", (c) =>
    c.json({ error: `Unknown profile ${c.req.param("profile")}: the profiles are ${knownProfiles()}` }, 404),
  );

  app.get("/sse", async (c) => {
    keepOpen(c);
    if (sessions.isFull()) return full(c);
    const auth = authOf(c);
    const transport = new WebSseServerTransport("/messages", limits, auth);
    sessionOwner.set(transport, auth?.clientId);
    sessions.add(transport.sessionId, transport);
    transport.onclose = () => sessions.delete(transport.sessionId);
    const response = transport.response();
    await endpointFor(c).createServer("legacy").connect(transport);
    return sessions.respond(
      () => transport.sessionId,
      async () => response,
    );
  });

  app.post("/messages", async (c) => {
    const id = c.req.query("sessionId") ?? "";
    const transport = sessions.get(id);
    if (!(transport instanceof WebSseServerTransport) || sessionOwner.get(transport) !== ownerOf(c))
      return c.text("Session not found: open a new one with GET /sse", 404);
    return sessions.respond(
      () => id,
      () => transport.handlePost(c.req.raw),
    );
  });

  app.notFound((c) =>
    c.json(
      {
        error:
          "Not found: MCP is at /mcp (streamable HTTP; a profile's at /mcp/p/<name>) and /sse (legacy SSE), " +
          "health at /health, the status page at /",
      },
      404,
    ),
  );
  app.onError((error, c) => {
    options.logger.error("HTTP request failed", { path: c.req.path, error: describeError(error) });
    return c.json(jsonRpcError("Internal error", -32603), 500);
  });

  return {
    fetch: (request, server) => app.fetch(request, server),
    sessionCount: () => sessions.size,
    async close() {
      clearInterval(sweeper);
      for (const endpoint of endpoints) await endpoint.close();
      await sessions.closeAll();
    },
  };
}
