import { Client } from "@modelcontextprotocol/client";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";

/**
 * Both ends of in-memory stdio pipes, for serveStdio with a LineStdioServerTransport on `input` and
 * `output`: an SDK client of either era (not connected yet: `client.connect(clientSide)`), each line
 * the server writes parsed, kept in `written` and handed to the client, and `writeLine` for a raw
 * line from the client's side.
 */
export function inMemoryStdio(era: "2025" | "2026") {
  let feed: ReadableStreamDefaultController<Uint8Array> | undefined;
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      feed = controller;
    },
  });
  const writeLine = (text: string) => feed!.enqueue(new TextEncoder().encode(text));
  const client = new Client(
    { name: "t", version: "1" },
    era === "2026" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  const written: JSONRPCMessage[] = [];
  const clientSide: Transport = {
    start: async () => {},
    close: async () => {},
    send: async (message) => writeLine(`${JSON.stringify(message)}\n`),
  };
  let pending = "";
  const output = {
    write(text: string) {
      pending += text;
      for (let newline = pending.indexOf("\n"); newline >= 0; newline = pending.indexOf("\n")) {
        const message = JSON.parse(pending.slice(0, newline)) as JSONRPCMessage;
        pending = pending.slice(newline + 1);
        written.push(message);
        queueMicrotask(() => clientSide.onmessage?.(message));
      }
    },
    flush() {},
  };
  return { input, output, client, clientSide, written, writeLine };
}
