import type { Server } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import type { Logger } from "../log.ts";
import type { ClientEra } from "./proxy-server.ts";
import { LineStdioServerTransport } from "./stdio-transport.ts";

/**
 * Serves MCP over this process's stdin/stdout, in whichever revision the client opens with: a
 * 2026-07-28 request (its `_meta` names the version) pins the connection to the modern era, an
 * `initialize` to the legacy one (the SDK's serveStdio decides, and builds one server for the
 * connection from `createServer`; a probe that falls back gets a throw-away one). `closed` settles
 * when the client goes away (stdin ends), which is how stdio clients say goodbye.
 */
export interface StdioHandle {
  closed: Promise<void>;
  close(): Promise<void>;
}

export interface StdioServerOptions {
  maxRequestBytes: number;
  logger: Logger;
  /** Told the method of each request as it arrives (serve starts its upstreams on the first that needs them). */
  onRequest?: ((method: string) => void) | undefined;
}

export function startStdioServer(
  createServer: (era: ClientEra) => Server,
  options: StdioServerOptions,
): StdioHandle {
  const transport = new LineStdioServerTransport({
    maxRequestBytes: options.maxRequestBytes,
    onRequest: options.onRequest,
  });
  const handle = serveStdio(({ era }) => createServer(era), {
    transport,
    legacy: "serve",
    onerror: (error) => options.logger.debug(`stdio: ${error.message}`),
  });
  return {
    closed: transport.closed,
    async close() {
      await handle.close().catch(() => undefined);
      await transport.close();
    },
  };
}
