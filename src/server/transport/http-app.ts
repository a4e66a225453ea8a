import type { Server } from "@modelcontextprotocol/server";
import { isInitializeRequest, isLegacyRequest } from "@modelcontextprotocol/server";
import { type Context, Hono } from "hono";
import { describeError } from "../../errors.ts";
import type { Audience } from "../cache-hints.ts";
import type { ClientEra } from "../client-era.ts";
import type { ChangeFeed } from "../federation/change-feed.ts";
import type { HealthAnswer } from "../observe/health-route.ts";
import type { ProxyMetrics } from "../observe/metrics.ts";
import type { StatusSources } from "../observe/status-page.ts";
import { isPlainModernRequest } from "../plain-dispatch.ts";
import { type DoorOptions, type HttpDoor, jsonRpcError, openDoor } from "./http-door.ts";
import { type HttpLimits, readBodyText } from "./http-limits.ts";
import { createLegacySessions } from "./legacy-sessions.ts";
import type { ListenAdmission } from "./listen-admission.ts";
import { createMcpEndpoint, type McpEndpoint } from "./modern-endpoint.ts";
import { serveStatusRoutes } from "./status-routes.ts";

/**
 * The HTTP face of the proxy: MCP at /mcp in both revisions (and each profile's at /mcp/p/<name>,
 * with its status page at /p/<name>/), the legacy SSE transport at /sse
 * (+ /messages) for old clients, /health for probes, and the DNS-rebinding guard in front of
 * everything. At /mcp a request that carries the 2026-07-28 `_meta` envelope is served statelessly
 * (one MCP server per request, by the SDK's createMcpHandler, which also answers every modern
 * protocol error and serves `subscriptions/listen` streams); `initialize` and requests of an open
 * session are served in that session, as before (one MCP server per session). Bodies, sessions and
 * streams are bounded (http-limits.ts, http-sessions.ts); modern requests in flight, listen streams
 * included, count against `maxSessions` too. The door is http-door.ts, the sessions
 * legacy-sessions.ts, the routes beside MCP status-routes.ts.
 */
export interface HttpAppOptions extends DoorOptions {
  /** `audience`: who the endpoint it answers at serves (cache-hints.ts). */
  createServer: (era: ClientEra, audience: Audience) => Server;
  /** The /health answer and its HTTP status (health-route.ts says who is told what). */
  health: (openSessions: () => number) => HealthAnswer;
  limits: HttpLimits & { maxSessions: number; sessionIdleMs: number };
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
  /** The console (src/console/): its routes, mounted before the status page's; `admits` is the door's. */
  console?: { mount(app: Hono, door: HttpDoor): void } | undefined;
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

/** MCP requests may stay open for as long as a tool runs: Bun's idle timeout is for the rest. */
function keepOpen(c: Context): void {
  const server = c.env as { timeout?: (request: Request, seconds: number) => void } | undefined;
  server?.timeout?.(c.req.raw, 0);
}

export function createHttpApp(options: HttpAppOptions): HttpApp {
  const { limits } = options;
  const sessions = createLegacySessions({ limits, logger: options.logger });
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
  const door = openDoor(app, options);
  const { authOf, confinedTo, forbidden } = door;
  options.console?.mount(app, door);
  const profileNames = [...(options.profiles?.keys() ?? [])];
  const knownProfiles = () =>
    profileNames.length > 0 ? profileNames.join(", ") : "none (mcpproxy.profiles is empty)";
  serveStatusRoutes(app, door, {
    health: () => options.health(() => sessions.size),
    metrics: options.metrics,
    status: options.status,
    profiles: options.profiles,
    knownProfiles,
  });

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
    if (sessionId) {
      return (
        sessions.serveInSession(sessionId, endpoint, auth, c.req.raw, parsedBody) ??
        c.json(jsonRpcError("Session not found: start a new one with initialize", -32001), 404)
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
    if (isPlainModernRequest(parsedBody) || !(await isLegacyRequest(c.req.raw, parsedBody))) {
      if (modernInFlight.count >= limits.maxSessions) return full(c);
      return endpoint.serveModern(c.req.raw, parsedBody, auth);
    }
    const isInit = Array.isArray(parsedBody)
      ? parsedBody.some(isInitializeRequest)
      : isInitializeRequest(parsedBody);
    if (!isInit)
      return c.json(jsonRpcError("Bad Request: send initialize first (no Mcp-Session-Id header)"), 400);
    if (sessions.isFull()) return full(c);
    return sessions.open(endpoint, auth, c.req.raw, parsedBody);
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

  app.get("/sse", async (c) => {
    keepOpen(c);
    if (sessions.isFull()) return full(c);
    return sessions.openSse(endpointFor(c), authOf(c));
  });

  app.post("/messages", async (c) => {
    const posted = sessions.postSse(c.req.query("sessionId") ?? "", authOf(c)?.clientId, c.req.raw);
    return posted ?? c.text("Session not found: open a new one with GET /sse", 404);
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
      sessions.stopSweeping();
      for (const endpoint of endpoints) await endpoint.close();
      await sessions.close();
    },
  };
}
