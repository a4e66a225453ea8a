import { describe, expect, test } from "bun:test";
import {
  InMemoryTransport,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  isLegacyRequest,
  type JSONRPCMessage,
  PROTOCOL_VERSION_META_KEY,
  Server,
} from "@modelcontextprotocol/server";
import { seededRandom } from "../../tests/helpers.ts";
import { dispatchPlainRequests, isPlainModernRequest, isPlainRequest } from "./plain-dispatch.ts";

function randomMessages(count: number): unknown[] {
  const random = seededRandom(3);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const odd = [
    '"1.0"',
    "1.5",
    "null",
    "[]",
    "2e20",
    '{"_meta":5}',
    '{"_meta":{"progressToken":1.5}}',
    "true",
  ];
  const usual: Record<string, string[]> = {
    jsonrpc: ['"2.0"'],
    id: ["1", '"x"', "-4"],
    method: ['"tools/call"', '"tools/list"', '"ping"'],
    params: [
      "{}",
      '{"name":"a"}',
      '{"_meta":{"progressToken":"t"}}',
      '{"_meta":{"progressToken":3,"x":1}}',
      '{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}',
      '{"__proto__":{"a":1}}',
    ],
    result: ["{}"],
    error: ['{"code":1,"message":"m"}'],
    __proto__: ["{}"],
    extra: ["1"],
  };
  const messages: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const entries: string[] = [];
    for (const key of ["jsonrpc", "id", "method", "params", "result", "error", "__proto__", "extra"]) {
      if (random() >= (["jsonrpc", "id", "method", "params"].includes(key) ? 0.85 : 0.08)) continue;
      entries.push(`"${key}":${random() < 0.8 ? pick(usual[key]!) : pick(odd)}`);
    }
    if (random() < 0.3) entries.reverse();
    messages.push(JSON.parse(`{${entries.join(",")}}`));
  }
  return messages;
}

describe("a plain request is what the SDK's guards take as a request, and as nothing else", () => {
  test("on random messages, odd keys and types among them", () => {
    let plain = 0;
    for (const message of randomMessages(6000)) {
      if (!isPlainRequest(message)) continue;
      plain++;
      expect(isJSONRPCResultResponse(message)).toBe(false);
      expect(isJSONRPCErrorResponse(message)).toBe(false);
      expect(isJSONRPCRequest(message)).toBe(true);
    }
    expect(plain).toBeGreaterThan(300);
  });
});

describe("a server that takes plain requests past the guards answers as one that does not", () => {
  async function serve(plain: boolean) {
    const server = new Server({ name: "t", version: "1" }, { capabilities: { tools: {} } });
    if (plain) dispatchPlainRequests(server);
    server.setRequestHandler("tools/list", async () => ({ tools: [] }));
    server.setRequestHandler("tools/call", async (request) => ({
      content: [{ type: "text", text: JSON.stringify(request.params) }],
    }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const answers: JSONRPCMessage[] = [];
    clientSide.onmessage = (message) => void answers.push(message);
    await clientSide.start();
    return { send: (message: unknown) => clientSide.send(message as JSONRPCMessage), answers };
  }

  test("requests plain and odd, notifications, and messages that are none of these", async () => {
    const [sdk, plain] = await Promise.all([serve(false), serve(true)]);
    const messages: unknown[] = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { jsonrpc: "2.0", id: "three", method: "tools/call", params: { name: "a", arguments: { x: 1 } } },
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "a", _meta: { progressToken: 1.5 } } },
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "a" }, extra: true },
      { jsonrpc: "2.0", id: 6, method: "no/such/method" },
      { jsonrpc: "2.0", id: 7.5, method: "tools/list" },
      { jsonrpc: "1.0", id: 8, method: "tools/list" },
      ...randomMessages(300),
    ];
    for (const message of messages) {
      await sdk.send(message);
      await plain.send(message);
    }
    await Bun.sleep(50);
    expect(plain.answers).toEqual(sdk.answers);
    expect(sdk.answers.length).toBeGreaterThan(5);
    expect(sdk.answers.some((answer) => isJSONRPCNotification(answer))).toBe(false);
  });
});

describe("a plain modern request is one the SDK's entry never classifies as 2025", () => {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const envelopes: unknown[] = [
    { [PROTOCOL_VERSION_META_KEY]: "2026-07-28" },
    { [PROTOCOL_VERSION_META_KEY]: "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} },
    { [PROTOCOL_VERSION_META_KEY]: "2025-06-18" },
    { [PROTOCOL_VERSION_META_KEY]: 7 },
    { [PROTOCOL_VERSION_META_KEY]: "2026-07-28", progressToken: 1.5 },
    { progressToken: 1 },
    {},
    "odd",
  ];

  test("on requests with and without envelope claims, odd ones among them, whatever the headers", async () => {
    let modern = 0;
    const bodies: unknown[] = [...randomMessages(400)];
    for (const method of ["tools/call", "tools/list", "initialize", "ping"])
      for (const _meta of envelopes)
        bodies.push({ jsonrpc: "2.0", id: 1, method, params: { name: "a", _meta } });
    for (const body of bodies) {
      const headerSets: Record<string, string>[] = [
        {},
        { "mcp-protocol-version": "2025-06-18" },
        { "mcp-method": "other" },
      ];
      for (const headers of headerSets) {
        if (!isPlainModernRequest(body)) continue;
        modern++;
        expect(await isLegacyRequest(post(body, headers), body)).toBe(false);
      }
    }
    expect(modern).toBeGreaterThan(20);
  });
});
