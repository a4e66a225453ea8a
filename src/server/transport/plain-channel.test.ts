import { describe, expect, test } from "bun:test";
import {
  type CallToolResult,
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  Server,
  type Transport,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { seededRandom } from "../../../tests/helpers.ts";
import { inMemoryStdio } from "../../../tests/support/in-memory-stdio.ts";
import { isPlainResponse } from "../../upstream/modern-wire.ts";
import { countPlainMessages } from "./plain-channel.ts";
import { LineStdioServerTransport } from "./stdio-transport.ts";

/**
 * serveStdio over in-memory pipes, its server's channel counting plain messages, and an SDK client
 * of either era on the other end: the channel is found, and it counts the requests in flight as the
 * SDK's own channel does.
 */
async function serve(era: "2025" | "2026") {
  const { input, output, client, clientSide } = inMemoryStdio(era);
  const channels: {
    counted: boolean;
    pending: Set<unknown>;
    intercept?: ((message: JSONRPCMessage) => unknown) | undefined;
  }[] = [];
  let release: () => void = () => {};
  const handle = serveStdio(
    () => {
      const server = new Server({ name: "s", version: "1" }, { capabilities: { tools: {} } });
      server.setRequestHandler("tools/list", async () => ({ tools: [] }));
      server.setRequestHandler("tools/call", async (request): Promise<CallToolResult> => {
        if (request.params.name === "slow") {
          await new Promise<void>((resolve) => {
            release = resolve;
          });
        }
        return { content: [{ type: "text", text: request.params.name }] };
      });
      const connect = server.connect.bind(server);
      server.connect = (channel) => {
        const internals = channel as unknown as {
          _pendingRequests: Set<unknown>;
          _outboundIntercept?: (message: JSONRPCMessage) => unknown;
        };
        channels.push({
          counted: countPlainMessages(channel),
          pending: internals._pendingRequests,
          intercept: internals._outboundIntercept,
        });
        return connect(channel);
      };
      return server;
    },
    { transport: new LineStdioServerTransport({ maxRequestBytes: 1 << 20, input, output }), legacy: "serve" },
  );
  await client.connect(clientSide);
  return {
    client,
    channels,
    release: () => release(),
    close: async () => {
      await client.close();
      await handle.close();
    },
  };
}

describe("serveStdio's channel counts plain messages without its guards", () => {
  for (const era of ["2025", "2026"] as const) {
    test(`a ${era} client: the channel is found, and its requests in flight are counted`, async () => {
      const served = await serve(era);
      try {
        expect(served.channels.length).toBeGreaterThan(0);
        expect(served.channels.every((channel) => channel.counted)).toBe(true);
        const channel = served.channels.at(-1)!;
        expect((await served.client.callTool({ name: "quick" })).content).toEqual([
          { type: "text", text: "quick" },
        ]);
        expect(channel.pending.size).toBe(0);
        const slow = served.client.callTool({ name: "slow" });
        await Bun.sleep(20);
        expect(channel.pending.size).toBe(1);
        served.release();
        expect((await slow).content).toEqual([{ type: "text", text: "slow" }]);
        expect(channel.pending.size).toBe(0);
        // A modern channel's intercept (listen streams) lets a response by: a plain one goes past it.
        if (era === "2026") expect(channel.intercept).toBeFunction();
        const response = { jsonrpc: "2.0", id: 9, result: { content: [] } } as JSONRPCMessage;
        expect(channel.intercept?.(response)).toBeUndefined();
      } finally {
        await served.close();
      }
    });
  }

  test("a transport that is not the channel is left as it is", () => {
    const transport: Transport = { start: async () => {}, close: async () => {}, send: async () => {} };
    const send = transport.send;
    expect(countPlainMessages(transport)).toBe(false);
    expect(transport.send).toBe(send);
  });

  test("a plain response is one the server SDK's guards take as a response", () => {
    const random = seededRandom(9);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const odd = ['"1.0"', "1.5", "null", "[]", '{"_meta":5}', '{"code":1.5,"message":"m"}', "2e20"];
    const usual: Record<string, string[]> = {
      jsonrpc: ['"2.0"'],
      id: ["1", '"x"', "7"],
      result: ["{}", '{"_meta":{}}', '{"content":[]}', '{"a":1}'],
      error: ['{"code":-1,"message":"m"}'],
      method: ['"m"'],
      __proto__: ["{}"],
      extra: ["1"],
    };
    let plain = 0;
    for (let i = 0; i < 5000; i++) {
      const entries: string[] = [];
      for (const key of ["jsonrpc", "id", "result", "error", "method", "__proto__", "extra"]) {
        if (random() >= (["jsonrpc", "id", "result"].includes(key) ? 0.9 : 0.1)) continue;
        entries.push(`"${key}":${random() < 0.8 ? pick(usual[key]!) : pick(odd)}`);
      }
      if (random() < 0.3) entries.reverse();
      const message = JSON.parse(`{${entries.join(",")}}`) as JSONRPCMessage;
      if (!isPlainResponse(message)) continue;
      plain++;
      expect(isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)).toBe(true);
    }
    expect(plain).toBeGreaterThan(100);
  });
});
