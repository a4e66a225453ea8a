import { ProxyError } from "../errors.ts";
import type { HttpApp } from "./http-app.ts";

/** Binds the HTTP app with Bun.serve; port 0 picks a free port, reported in `url`. */
export interface HttpHandle {
  url: string;
  port: number;
  close(): Promise<void>;
}

export function startHttpServer(app: HttpApp, host: string, port: number): HttpHandle {
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({ hostname: host, port, fetch: app.fetch, idleTimeout: 0 });
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
