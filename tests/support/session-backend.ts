import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A stand-in for one mcpproxy replica as a load balancer sees it: 2025 sessions held in memory
 * (an `initialize`, a POST without `Mcp-Session-Id` or `Mcp-Method`, opens one; a request for an id
 * this backend does not hold gets 404, as mcpproxy answers), 2026-07-28 requests (`Mcp-Method`)
 * answered by anyone, the SSE transport's /sse + /messages?sessionId=, and a streamed answer
 * (`x-stream: 1`) held open until told. Every answer names the backend, so a test sees where nginx sent each request.
 */
export interface SessionBackend {
  name: string;
  address: string;
  /** Request ids (the `x-request-id` header) this backend received, in order. */
  received: string[];
  /** Makes the backend drop every connection once it has read the request, like a replica dying mid-call. */
  crashOnRequest(on: boolean): void;
  /** Ends the open streamed answers (their second chunk). */
  releaseStreams(): void;
  stop(): Promise<void>;
}

export async function startSessionBackend(name: string): Promise<SessionBackend> {
  const sessions = new Set<string>();
  const received: string[] = [];
  const waiting: (() => void)[] = [];
  let crashing = false;
  let next = 0;
  const answer = (res: ServerResponse, status: number, body: Record<string, unknown> = {}, headers = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify({ backend: name, ...body }));
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://backend");
    const sessionId = req.headers["mcp-session-id"];
    const method = req.headers["mcp-method"];
    if (url.pathname === "/sse" && req.method === "GET") {
      const id = `${name}-sse-${++next}`;
      sessions.add(id);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`event: endpoint\ndata: /messages?sessionId=${id}\n\n`);
      return;
    }
    if (url.pathname === "/messages") {
      const id = url.searchParams.get("sessionId") ?? "";
      return sessions.has(id)
        ? answer(res, 202, { sessionId: id })
        : answer(res, 404, { error: "unknown session" });
    }
    if (req.headers["x-stream"] === "1") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: first from ${name}\n\n`);
      waiting.push(() => res.end(`data: last from ${name}\n\n`));
      return;
    }
    if (typeof sessionId === "string") {
      return sessions.has(sessionId)
        ? answer(res, 200, { sessionId })
        : answer(res, 404, { error: "Session not found: initialize again" });
    }
    if (typeof method === "string") return answer(res, 200, { method });
    const id = `${name}-${++next}`;
    sessions.add(id);
    return answer(res, 200, { sessionId: id }, { "mcp-session-id": id });
  };
  const server: Server = createServer((req, res) => {
    const requestId = req.headers["x-request-id"];
    if (typeof requestId === "string") received.push(requestId);
    // The body is read first: a crash after it is a request that reached the replica.
    req.resume();
    req.on("end", () => {
      if (crashing) req.socket.destroy();
      else handle(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    name,
    address: `127.0.0.1:${port}`,
    received,
    crashOnRequest(on) {
      crashing = on;
    },
    releaseStreams() {
      for (const end of waiting.splice(0)) end();
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface SentRequest {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One HTTP request from a chosen local address (127.0.0.x), so that a test can be several
 * clients: nginx keeps a 2025 session on one replica by the client's address.
 */
export function send(
  url: URL,
  options: { method?: string; headers?: Record<string, string>; body?: string; from?: string } = {},
): Promise<SentRequest> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: options.method ?? "POST",
        headers: options.headers,
        localAddress: options.from ?? "127.0.0.1",
        agent: false,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(options.body ?? "");
  });
}

/** The backend an answer names. */
export const backendOf = (answer: SentRequest): string =>
  (JSON.parse(answer.body) as { backend: string }).backend;

export interface OpenStream {
  status: number;
  /** The first chunk that arrived. */
  first: string;
  /** Everything, once the answer ends. */
  rest: Promise<string>;
  close(): void;
}

/** A request whose answer is a stream: resolves with its first chunk while the rest is still to come. */
export function openStream(
  url: URL,
  options: { method?: string; headers?: Record<string, string>; from?: string } = {},
): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: options.method ?? "GET",
        headers: options.headers,
        localAddress: options.from ?? "127.0.0.1",
        agent: false,
      },
      (res) => {
        let body = "";
        let ended: (text: string) => void = () => undefined;
        const rest = new Promise<string>((done) => {
          ended = done;
        });
        res.setEncoding("utf8");
        res.once("data", (chunk: string) =>
          resolve({ status: res.statusCode ?? 0, first: chunk, rest, close: () => req.destroy() }),
        );
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => ended(body));
        res.on("error", () => ended(body));
      },
    );
    req.on("error", reject);
    req.end();
  });
}
