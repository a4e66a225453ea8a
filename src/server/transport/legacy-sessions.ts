import type { AuthInfo } from "@modelcontextprotocol/server";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import type { Logger } from "../../log.ts";
import { createHttpLane, type HttpLane } from "./http-lane.ts";
import type { HttpLimits } from "./http-limits.ts";
import { createHttpSessions, type HttpSessions } from "./http-sessions.ts";
import type { McpEndpoint } from "./modern-endpoint.ts";
import { WebSseServerTransport } from "./sse-transport.ts";

/**
 * The sessions of the HTTP app's sessionful transports (http-app.ts): a 2025 client's streamable
 * HTTP session, opened by `initialize` at an MCP endpoint, and an old client's SSE session (GET
 * /sse, then POST /messages). One MCP server per session; each is bounded and swept when idle
 * (http-sessions.ts), and only the principal that opened it, at the endpoint that opened it, may
 * use it: elsewhere its id is not found, so it cannot cross principals or profiles.
 */
export interface LegacySessionsOptions {
  limits: HttpLimits & { maxSessions: number; sessionIdleMs: number };
  logger: Logger;
}

export interface LegacySessions {
  readonly size: number;
  isFull(): boolean;
  /**
   * A request of the open streamable HTTP session `id`, or undefined when there is no such session
   * for this endpoint and caller.
   */
  serveInSession(
    id: string,
    endpoint: McpEndpoint,
    auth: AuthInfo | undefined,
    request: Request,
    parsedBody: unknown,
  ): Promise<Response> | undefined;
  /** `initialize`: a new streamable HTTP session of `endpoint`, its caller's, and the answer. */
  open(
    endpoint: McpEndpoint,
    auth: AuthInfo | undefined,
    request: Request,
    parsedBody: unknown,
  ): Promise<Response>;
  /** GET /sse: a new SSE session of `endpoint`, its caller's, and its event stream. */
  openSse(endpoint: McpEndpoint, auth: AuthInfo | undefined): Promise<Response>;
  /** POST /messages to the SSE session `id`, or undefined when `owner` opened no such session. */
  postSse(id: string, owner: string | undefined, request: Request): Promise<Response> | undefined;
  /** Stops sweeping idle sessions (first, at shutdown: no sweep then closes one the shutdown is closing). */
  stopSweeping(): void;
  /** Stops the sweeper and ends every session. */
  close(): Promise<void>;
}

type Transport = WebStandardStreamableHTTPServerTransport | WebSseServerTransport;

export function createLegacySessions(options: LegacySessionsOptions): LegacySessions {
  const { limits } = options;
  /** The principal that opened each session (legacy HTTP and SSE): no other may use it. */
  const sessionOwner = new WeakMap<object, string | undefined>();
  /** The endpoint that opened each legacy session: elsewhere its id is not found, so it cannot cross profiles. */
  const sessionEndpoint = new WeakMap<object, McpEndpoint>();
  /** Each streamable HTTP session's plain lane (http-lane.ts): the calls it serves past the SDK. */
  const lanes = new WeakMap<object, HttpLane>();
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
  const handle = (
    transport: WebStandardStreamableHTTPServerTransport,
    request: Request,
    parsedBody: unknown,
    auth: AuthInfo | undefined,
  ) =>
    transport.handleRequest(request, {
      ...(parsedBody === undefined ? {} : { parsedBody }),
      ...(auth ? { authInfo: auth } : {}),
    });

  return {
    get size() {
      return sessions.size;
    },
    isFull: () => sessions.isFull(),
    serveInSession(id, endpoint, auth, request, parsedBody) {
      const transport = sessions.get(id);
      if (
        !(transport instanceof WebStandardStreamableHTTPServerTransport) ||
        sessionEndpoint.get(transport) !== endpoint ||
        sessionOwner.get(transport) !== auth?.clientId
      )
        return undefined;
      const byLane = lanes.get(transport)?.serve(request, parsedBody, auth);
      return sessions.respond(
        () => id,
        () => byLane ?? handle(transport, request, parsedBody, auth),
      );
    },
    async open(endpoint, auth, request, parsedBody) {
      const transport: WebStandardStreamableHTTPServerTransport =
        new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => crypto.randomUUID(),
          onsessioninitialized: (id) => sessions.add(id, transport),
          onsessionclosed: (id) => sessions.delete(id),
        });
      sessionEndpoint.set(transport, endpoint);
      sessionOwner.set(transport, auth?.clientId);
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      const server = endpoint.createServer("legacy");
      await server.connect(transport);
      lanes.set(transport, createHttpLane(transport, server));
      return sessions.respond(
        () => transport.sessionId,
        () => handle(transport, request, parsedBody, auth),
      );
    },
    async openSse(endpoint, auth) {
      const transport = new WebSseServerTransport("/messages", limits, auth);
      sessionOwner.set(transport, auth?.clientId);
      sessions.add(transport.sessionId, transport);
      transport.onclose = () => sessions.delete(transport.sessionId);
      const response = transport.response();
      await endpoint.createServer("legacy").connect(transport);
      return sessions.respond(
        () => transport.sessionId,
        async () => response,
      );
    },
    postSse(id, owner, request) {
      const transport = sessions.get(id);
      if (!(transport instanceof WebSseServerTransport) || sessionOwner.get(transport) !== owner)
        return undefined;
      return sessions.respond(
        () => id,
        () => transport.handlePost(request),
      );
    },
    stopSweeping: () => clearInterval(sweeper),
    async close() {
      clearInterval(sweeper);
      await sessions.closeAll();
    },
  };
}
