import { describe, expect, test } from "bun:test";
import {
  type CallToolResult,
  type JSONRPCMessage,
  Server,
  type Transport,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { inMemoryStdio } from "../../../tests/support/in-memory-stdio.ts";
import { createPinnedDelivery } from "./pinned-delivery.ts";
import { countPlainMessages } from "./plain-channel.ts";
import { LineStdioServerTransport } from "./stdio-transport.ts";

/**
 * serveStdio over in-memory pipes, as startStdioServer sets it up, with or without its pinned
 * connection's plain requests taken past the entry: a client of either era, and raw lines written
 * as an agent could write them, get the same answers both ways.
 */
async function serve(era: "2025" | "2026", isClaiming: boolean) {
  const { input, output, client, clientSide, written, writeLine } = inMemoryStdio(era);
  const pinned = createPinnedDelivery();
  let claimed = 0;
  const claim = (message: JSONRPCMessage) => {
    const isTaken = pinned.claim(message);
    if (isTaken) claimed++;
    return isTaken;
  };
  const handle = serveStdio(
    () => {
      const server = new Server({ name: "s", version: "1" }, { capabilities: { tools: {} } });
      server.setRequestHandler("tools/list", async () => ({ tools: [] }));
      server.setRequestHandler(
        "tools/call",
        async (request): Promise<CallToolResult> => ({
          content: [{ type: "text", text: request.params.name }],
        }),
      );
      const connect = server.connect.bind(server);
      server.connect = (channel) => {
        countPlainMessages(channel);
        pinned.watch(channel);
        return connect(channel);
      };
      return server;
    },
    {
      transport: new LineStdioServerTransport({
        maxRequestBytes: 1 << 20,
        input,
        output,
        ...(isClaiming ? { claim } : {}),
      }),
      legacy: "serve",
    },
  );
  await client.connect(clientSide);
  return {
    client,
    claimed: () => claimed,
    /**
     * A raw line from the client; resolves with what the server wrote back for `id`, or "none" once
     * a listing asked after it is answered and 50 more turns have passed (the SDK drops some lines unanswered).
     */
    async raw(message: Record<string, unknown>, id: number) {
      writeLine(`${JSON.stringify(message)}\n`);
      const pong = client.listTools();
      for (let i = 0; i < 2000; i++) {
        const answer = written.find((sent) => (sent as { id?: unknown }).id === id);
        if (answer) return answer;
        await Bun.sleep(1);
        if (i >= 50 && (await Promise.race([pong.then(() => true), Bun.sleep(0).then(() => false)])))
          return "none";
      }
      throw new Error(`no answer to ${id}, nor to the listing after it`);
    },
    close: async () => {
      pinned.stop();
      await client.close();
      await handle.close();
    },
  };
}

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** Raw lines an agent could write on a pinned connection, each with its id. */
function rawLines(era: "2025" | "2026"): Record<string, unknown>[] {
  const meta = era === "2026" ? { _meta: ENVELOPE } : {};
  return [
    { jsonrpc: "2.0", id: 101, method: "tools/call", params: { name: "plain", ...meta } },
    { jsonrpc: "2.0", id: 102, method: "tools/call", params: { name: "extra", ...meta }, extra: 1 },
    { jsonrpc: "2.0", id: 103, method: "initialize", params: { ...meta } },
    { jsonrpc: "2.0", id: 104, method: "no/such", params: { ...meta } },
    { jsonrpc: "2.0", id: 105, method: "tools/call", params: { name: "no envelope" } },
    { jsonrpc: "2.0", id: 106, method: "tools/list", params: { _meta: { progressToken: 1.5 } } },
    { jsonrpc: "2.0", id: 107, method: "server/discover", params: { ...meta } },
  ];
}

/** What a client reads: the same for every run (the server's own name and version vary not). */
const answerOf = (message: JSONRPCMessage | string) => JSON.parse(JSON.stringify(message)) as unknown;

describe("a pinned stdio connection's plain requests go past the entry", () => {
  for (const era of ["2025", "2026"] as const) {
    test(`a ${era} client gets the same answers with and without it, and its calls are taken`, async () => {
      const answers: unknown[][] = [];
      for (const isClaiming of [false, true]) {
        const served = await serve(era, isClaiming);
        try {
          const got: unknown[] = [];
          for (let i = 0; i < 5; i++) got.push((await served.client.callTool({ name: `t${i}` })).content);
          got.push((await served.client.listTools()).tools);
          for (const line of rawLines(era)) got.push(answerOf(await served.raw(line, line.id as number)));
          answers.push(got);
          // Five calls and the listing, each a plain request once the connection is pinned.
          if (isClaiming) expect(served.claimed()).toBeGreaterThanOrEqual(6);
          else expect(served.claimed()).toBe(0);
        } finally {
          await served.close();
        }
      }
      expect(answers[1]).toEqual(answers[0]!);
    });
  }

  test("nothing is taken before the connection is pinned, nor after stop", () => {
    const pinned = createPinnedDelivery();
    const request = { jsonrpc: "2.0", id: 1, method: "tools/list" } as JSONRPCMessage;
    expect(pinned.claim(request)).toBe(false);
    const delivered: JSONRPCMessage[] = [];
    const channel = {
      _closed: false,
      deliver: (message: JSONRPCMessage) => void delivered.push(message),
      start: async () => {},
      close: async () => {},
      send: async () => {},
    };
    pinned.watch(channel as Transport);
    // A probe server is handed server/discover alone: not pinned yet.
    channel.deliver({ jsonrpc: "2.0", id: 0, method: "server/discover" } as JSONRPCMessage);
    expect(pinned.claim(request)).toBe(false);
    channel.deliver({ jsonrpc: "2.0", id: 2, method: "tools/list" } as JSONRPCMessage);
    expect(pinned.claim(request)).toBe(true);
    expect(delivered.at(-1)).toBe(request);
    for (const method of ["initialize", "subscriptions/listen", "server/discover"])
      expect(pinned.claim({ jsonrpc: "2.0", id: 3, method } as JSONRPCMessage)).toBe(false);
    expect(pinned.claim({ jsonrpc: "2.0", method: "notifications/cancelled" } as JSONRPCMessage)).toBe(false);
    channel._closed = true;
    expect(pinned.claim(request)).toBe(false);
    channel._closed = false;
    pinned.stop();
    expect(pinned.claim(request)).toBe(false);
  });
});

describe("a request whose taking throws", () => {
  test("is answered -32603 as the entry answers it, and the session goes on", async () => {
    let feed: ReadableStreamDefaultController<Uint8Array> | undefined;
    const input = new ReadableStream<Uint8Array>({
      start(controller) {
        feed = controller;
      },
    });
    const written: unknown[] = [];
    const errors: string[] = [];
    const dispatched: unknown[] = [];
    const transport = new LineStdioServerTransport({
      maxRequestBytes: 1 << 20,
      input,
      output: {
        write: (text: string) => void written.push(JSON.parse(text)),
        flush() {},
      },
      claim: (message) => {
        if ((message as { id?: unknown }).id === 1) throw new Error("broken");
        return false;
      },
    });
    transport.onerror = (error) => void errors.push(error.message);
    transport.onmessage = (message) => void dispatched.push(message);
    await transport.start();
    const line = (id: number) => `${JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list" })}\n`;
    feed!.enqueue(new TextEncoder().encode(line(1) + line(2)));
    for (let i = 0; i < 500 && (written.length < 1 || dispatched.length < 1); i++) await Bun.sleep(2);
    expect(written).toEqual([
      { jsonrpc: "2.0", id: 1, error: { code: -32603, message: "Internal server error" } },
    ]);
    expect(errors).toEqual(["broken"]);
    expect(dispatched).toEqual([{ jsonrpc: "2.0", id: 2, method: "tools/list" }]);
    await transport.close();
  });
});
