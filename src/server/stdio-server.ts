import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
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
  transport.onclose = () => markClosed();
  process.stdin.once("end", () => markClosed());
  process.stdin.once("close", () => markClosed());
  await server.connect(transport);
  return {
    closed,
    async close() {
      await server.close().catch(() => undefined);
      markClosed();
    },
  };
}
