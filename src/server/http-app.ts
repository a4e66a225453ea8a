import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { Hono } from "hono";
import { cors } from "hono/cors";
import { describeError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Ancestry } from "../upstream/proxy-ancestry.ts";
import { hostGuard } from "./host-guard.ts";
import { loopGuard } from "./loop-guard.ts";
import { WebSseServerTransport } from "./sse-transport.ts";

/**
 * The HTTP face of the proxy: streamable HTTP MCP at /mcp, the legacy SSE transport at /sse
 * (+ /messages) for old clients, one MCP server per session on both, /health for probes, and the
 * DNS-rebinding guard in front of everything.
 */
export interface HttpAppOptions {
  bindHost: string;
  logger: Logger;
  createServer: () => Server;
  /** The /health answer and its HTTP status. */
  health: (openSessions: () => number) => { httpStatus: 200 | 503; body: Record<string, unknown> };
  /** This proxy's place in a chain of proxies; requests from a chain it is already in are refused. */
  ancestry?: Ancestry | undefined;
  configPath?: string;
}

export interface HttpApp {
  fetch: (request: Request) => Response | Promise<Response>;
  /** Ends every open MCP session. */
  close(): Promise<void>;
  sessionCount(): number;
}

const jsonRpcError = (message: string, code = -32000) => ({
  jsonrpc: "2.0",
  error: { code, message },
  id: null,
});

export function createHttpApp(options: HttpAppOptions): HttpApp {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const sseSessions = new Map<string, WebSseServerTransport>();
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
        "last-event-id",
      ],
      exposeHeaders: ["mcp-session-id", "mcp-protocol-version"],
    }),
  );

  app.get("/health", (c) => {
    const { httpStatus, body } = options.health(() => sessions.size + sseSessions.size);
    return c.json(body, httpStatus);
  });

  app.all("/mcp", async (c) => {
    const sessionId = c.req.header("mcp-session-id");
    if (sessionId) {
      const transport = sessions.get(sessionId);
      if (!transport)
        return c.json(jsonRpcError("Session not found: start a new one with initialize", -32001), 404);
      return transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== "POST") {
      return c.json(jsonRpcError("Bad Request: send initialize first (no Mcp-Session-Id header)"), 400);
    }
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return c.json(jsonRpcError("Parse error: the body is not JSON", -32700), 400);
    }
    const isInit = Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body);
    if (!isInit)
      return c.json(jsonRpcError("Bad Request: send initialize first (no Mcp-Session-Id header)"), 400);

    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const server = options.createServer();
    await server.connect(transport);
    return transport.handleRequest(c.req.raw, { parsedBody: body });
  });

  app.get("/sse", async () => {
    const transport = new WebSseServerTransport("/messages");
    sseSessions.set(transport.sessionId, transport);
    transport.onclose = () => sseSessions.delete(transport.sessionId);
    const response = transport.response();
    await options.createServer().connect(transport);
    return response;
  });

  app.post("/messages", async (c) => {
    const transport = sseSessions.get(c.req.query("sessionId") ?? "");
    if (!transport) return c.text("Session not found: open a new one with GET /sse", 404);
    return transport.handlePost(c.req.raw);
  });

  app.notFound((c) =>
    c.json(
      { error: "Not found: MCP is at /mcp (streamable HTTP) and /sse (legacy SSE), health at /health" },
      404,
    ),
  );
  app.onError((error, c) => {
    options.logger.error("HTTP request failed", { path: c.req.path, error: describeError(error) });
    return c.json(jsonRpcError("Internal error", -32603), 500);
  });

  return {
    fetch: app.fetch,
    sessionCount: () => sessions.size + sseSessions.size,
    async close() {
      const open = [...sessions.values(), ...sseSessions.values()];
      sessions.clear();
      sseSessions.clear();
      await Promise.allSettled(open.map((transport) => transport.close()));
    },
  };
}
