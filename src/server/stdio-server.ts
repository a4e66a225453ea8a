import type { Server } from "@modelcontextprotocol/server";
import { LineStdioServerTransport } from "./stdio-transport.ts";

/**
 * Serves one MCP session over this process's stdin/stdout. `closed` settles when the client
 * goes away (stdin ends), which is how stdio clients say goodbye.
 */
export interface StdioHandle {
  closed: Promise<void>;
  close(): Promise<void>;
}

export async function startStdioServer(server: Server, maxRequestBytes: number): Promise<StdioHandle> {
  const transport = new LineStdioServerTransport({ maxRequestBytes });
  let markClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  await server.connect(transport);
  // After connect: the server installs its own onclose on the transport, and calls this one in turn.
  const serverOnClose = server.onclose;
  server.onclose = () => {
    serverOnClose?.();
    markClosed();
  };
  return {
    closed,
    async close() {
      await server.close().catch(() => undefined);
      markClosed();
    },
  };
}
