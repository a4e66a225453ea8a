import { ProxyError } from "../../errors.ts";
import type { HttpApp } from "./http-app.ts";

/** Binds the HTTP app with Bun.serve; port 0 picks a free port, reported in `url`. */
export interface HttpHandle {
  url: string;
  port: number;
  close(): Promise<void>;
}

const IDLE_TIMEOUT_S = 60;

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
    throw listenFailure(host, port, error);
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

/**
 * Binds host:port and lets go at once, so that `serve` names a busy port or a wrong --host before
 * it starts any server: starting them first buried the real cause under a warning per server
 * ("the proxy is shutting down"). The real bind follows; were the port taken in between, it
 * fails with the same message.
 */
export async function checkListenAddress(host: string, port: number): Promise<void> {
  let probe: ReturnType<typeof Bun.serve>;
  try {
    probe = Bun.serve({ hostname: host, port, fetch: () => new Response(null, { status: 503 }) });
  } catch (error) {
    throw listenFailure(host, port, error);
  }
  await probe.stop(true);
}

/** Why the listener could not start, and what to do: each cause has its own remedy. */
function listenFailure(host: string, port: number, error: unknown): ProxyError {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  const why =
    code === "EADDRINUSE"
      ? `port ${port} is in use, by another program or another mcpproxy (\`npm start\`, a second serve). ` +
        "Stop it, or pick another --port (0 picks a free one)."
      : code === "EADDRNOTAVAIL"
        ? `${host} is not an address of this machine. Use 127.0.0.1 (this machine only), 0.0.0.0 (every ` +
          "interface; clients then need the bearer token), or one of this machine's own addresses (--host)."
        : code === "ENOTFOUND" || code === "EAI_AGAIN"
          ? `the host name ${host} does not resolve. Give --host an address, such as 127.0.0.1.`
          : code === "EACCES"
            ? `ports below 1024 need privileges this user does not have. Pick a --port above 1023.`
            : `${(error as Error).message}. Check --host and --port.`;
  return new ProxyError("LISTEN_FAILED", `Cannot listen on ${where}: ${why}`, { cause: error });
}
