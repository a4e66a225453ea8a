import { ProxyError } from "../errors.ts";
import type { HttpApp } from "./http-app.ts";

/** Binds the HTTP app with Bun.serve; port 0 picks a free port, reported in `url`. */
export interface HttpHandle {
  url: string;
  port: number;
  close(): Promise<void>;
}

export const IDLE_TIMEOUT_S = 60;

export function startHttpServer(
  app: HttpApp,
  host: string,
  port: number,
  maxRequestBytes: number,
): HttpHandle {
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: host,
      port,
      fetch: (request, bunServer) => app.fetch(request, bunServer),
      // Idle keep-alive connections and slow requests outside /mcp and /sse are dropped after this;
      // MCP requests lift it for themselves (they stay open while a tool runs). Bun also closes a
      // connection whose headers do not arrive within about 10 s (slow-loris).
      idleTimeout: IDLE_TIMEOUT_S,
      // A backstop: the app refuses a body over maxRequestBytes itself, with a JSON-RPC error.
      maxRequestBodySize: maxRequestBytes * 2,
    });
  } catch (error) {
    throw new ProxyError(
      "LISTEN_FAILED",
      `Cannot listen on ${host}:${port}: ${(error as Error).message}. Pick another --port or stop what uses it.`,
      { cause: error },
    );
  }
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${server.port}/mcp`,
    port: server.port ?? port,
    async close() {
      await app.close();
      await server.stop(true);
    },
  };
}
