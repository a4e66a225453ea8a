import { afterEach, describe, expect, test } from "bun:test";
import {
  Client,
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type Progress,
} from "@modelcontextprotocol/client";
import { type CallToolResult, InMemoryTransport, Server } from "@modelcontextprotocol/server";
import { seededRandom } from "../../tests/helpers.ts";
import { createLeanCalls, decodeCallResult } from "./lean-call.ts";
import { isPlainResponse, watchModernWire } from "./modern-wire.ts";
import { callResultSchema } from "./plain-call-result.ts";

/**
 * A server whose tools answer as servers do, well and badly, and a client wired as the proxy wires
 * its upstream connections (modern-wire.ts on the transport); each call is made the lean way and
 * the SDK's way, and both must end the same.
 */
async function connect() {
  const server = new Server({ name: "t", version: "1" }, { capabilities: { tools: {} } });
  const cancelled: unknown[] = [];
  server.setNotificationHandler("notifications/cancelled", (notification) => {
    cancelled.push(notification.params.requestId);
  });
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const { name } = request.params;
    if (name === "plain") return { content: [{ type: "text", text: "hi" }] };
    if (name === "image") return { content: [{ type: "image", data: "aGk=", mimeType: "image/png" }] };
    if (name === "bad") return { content: "not a list" } as unknown as CallToolResult;
    if (name === "fails") throw new Error("it failed");
    if (name === "progress") {
      for (const progress of [1, 2]) {
        await ctx.mcpReq.notify({
          method: "notifications/progress",
          params: { progressToken: ctx.mcpReq._meta?.progressToken ?? 0, progress, total: 2 },
        });
      }
      return { content: [{ type: "text", text: "done" }] };
    }
    if (name === "slow") await new Promise((resolve) => setTimeout(resolve, 200));
    return { content: [{ type: "text", text: name }] };
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "t", version: "1" });
  const claims = watchModernWire(clientSide, { checkParamHeaders: false });
  await client.connect(clientSide);
  return { client, lean: createLeanCalls(client, claims), cancelled, close: () => client.close() };
}

type Outcome = { result?: unknown; error?: string; progress: Progress[] };

async function both(
  name: string,
  options: { timeout?: number; abortAfterMs?: number } = {},
): Promise<[Outcome, Outcome]> {
  const run = async (lean: boolean): Promise<Outcome> => {
    const { client, lean: calls, close } = await connect();
    const progress: Progress[] = [];
    const controller = new AbortController();
    if (options.abortAfterMs !== undefined)
      setTimeout(() => controller.abort("the client left"), options.abortAfterMs);
    const request = { method: "tools/call" as const, params: { name, arguments: {} } };
    const callOptions = {
      timeout: options.timeout ?? 10_000,
      signal: controller.signal,
      onprogress: (p: Progress) => void progress.push(p),
    };
    try {
      const result = lean
        ? await calls.call(request, { ...callOptions, resultSchema: callResultSchema(client) })
        : await client.request(request, callResultSchema(client), callOptions);
      return { result, progress };
    } catch (error) {
      return { error: `${(error as Error).constructor.name}: ${(error as Error).message}`, progress };
    } finally {
      await close();
    }
  };
  return [await run(false), await run(true)];
}

describe("a lean call ends as the SDK's request does", () => {
  for (const name of ["plain", "image", "bad", "fails", "progress"]) {
    test(`${name}`, async () => {
      const [sdk, lean] = await both(name);
      expect(lean).toEqual(sdk);
      if (name === "progress") expect(lean.progress).toHaveLength(2);
    });
  }

  test("a timeout, and a cancellation by the caller", async () => {
    const [sdkTimeout, leanTimeout] = await both("slow", { timeout: 20 });
    expect(leanTimeout).toEqual(sdkTimeout);
    expect(leanTimeout.error).toContain("Request timed out");
    const [sdkAbort, leanAbort] = await both("slow", { abortAfterMs: 20 });
    expect(leanAbort).toEqual(sdkAbort);
  });
});

describe("the lean way on the wire", () => {
  let opened: Awaited<ReturnType<typeof connect>> | undefined;
  afterEach(async () => opened?.close());

  test("ids stay one sequence with the SDK's own requests; a cancelled call tells the server its id", async () => {
    opened = await connect();
    const { client, lean, cancelled } = opened;
    const sent: unknown[] = [];
    const send = client.transport!.send.bind(client.transport);
    client.transport!.send = (message, options) => {
      if ("id" in message) sent.push(message.id);
      return send(message, options);
    };
    const options = {
      timeout: 10_000,
      signal: new AbortController().signal,
      onprogress: () => {},
      resultSchema: callResultSchema(client),
    };
    // Each lean call's id is told before the call is sent (call-tags.ts notes it so).
    const told: unknown[] = [];
    const onId = (id: number) => void told.push([id, sent.length]);
    await lean.call({ method: "tools/call", params: { name: "a" } }, { ...options, onId });
    await client.request({ method: "tools/call", params: { name: "b" } }, options);
    await lean.call({ method: "tools/call", params: { name: "c" } }, { ...options, onId });
    expect(sent).toEqual([sent[0], (sent[0] as number) + 1, (sent[0] as number) + 2]);
    expect(told).toEqual([
      [sent[0], 0],
      [sent[2], 2],
    ]);
    const controller = new AbortController();
    const call = lean.call(
      { method: "tools/call", params: { name: "slow" } },
      { ...options, signal: controller.signal },
    );
    controller.abort("enough");
    await expect(call).rejects.toThrow("enough");
    await Bun.sleep(20);
    expect(cancelled).toEqual([(sent[0] as number) + 3]);
  });

  test("a closed connection fails the call in flight as the SDK fails its own", async () => {
    opened = await connect();
    const { client, lean } = opened;
    const options = {
      timeout: 10_000,
      signal: new AbortController().signal,
      onprogress: () => {},
      resultSchema: callResultSchema(client),
    };
    const call = lean.call({ method: "tools/call", params: { name: "slow" } }, options);
    lean.closeAll();
    await expect(call).rejects.toThrow("Connection closed");
  });
});

describe("a plain response is one the SDK's guards take as a response", () => {
  test("on a corpus of odd messages and random ones", () => {
    const random = seededRandom(5);
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
    const messages: unknown[] = [];
    for (let i = 0; i < 5000; i++) {
      const entries: string[] = [];
      for (const key of ["jsonrpc", "id", "result", "error", "method", "__proto__", "extra"]) {
        if (random() >= (["jsonrpc", "id", "result"].includes(key) ? 0.9 : 0.1)) continue;
        entries.push(`"${key}":${random() < 0.8 ? pick(usual[key]!) : pick(odd)}`);
      }
      if (random() < 0.3) entries.reverse();
      messages.push(JSON.parse(`{${entries.join(",")}}`));
    }
    let plain = 0;
    for (const message of messages) {
      if (!isPlainResponse(message as JSONRPCMessage)) continue;
      plain++;
      expect(isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)).toBe(true);
    }
    expect(plain).toBeGreaterThan(100);
  });
});

describe("a 2026 server's plain complete result is decoded as the codec decodes it", () => {
  test("on results plain and not", () => {
    const client = new Client({ name: "t", version: "1" });
    (client as unknown as { _negotiatedProtocolVersion: string })._negotiatedProtocolVersion = "2026-07-28";
    const codec = (
      client as unknown as { _wireCodec(): Parameters<typeof decodeCallResult>[0] }
    )._wireCodec();
    const text = [{ type: "text", text: "a" }];
    const raws: unknown[] = [
      { resultType: "complete", content: text },
      { content: text, resultType: "complete", isError: true },
      { content: text, structuredContent: { a: 1 }, resultType: "complete" },
      {
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "s", version: "1" } },
        content: text,
        resultType: "complete",
      },
      { _meta: { "io.modelcontextprotocol/serverInfo": { name: 1 } }, content: text, resultType: "complete" },
      { _meta: "no", content: text, resultType: "complete" },
      { content: text },
      { content: text, resultType: "input_required" },
      { content: text, resultType: "other" },
      { content: [{ type: "text", text: "a", more: 1 }], resultType: "complete" },
      { content: "no", resultType: "complete" },
      JSON.parse('{"resultType":"complete","content":[],"__proto__":{"x":1}}'),
      JSON.parse('{"resultType":"complete","content":[],"structuredContent":{"__proto__":{"x":1}}}'),
    ];
    let plain = 0;
    for (const raw of raws) {
      const ours = decodeCallResult(codec, "modern", raw);
      const sdk = codec.decodeResult("tools/call", raw);
      expect(ours.kind).toBe(sdk.kind);
      if (sdk.kind === "complete" && ours.kind === "complete") {
        expect(JSON.stringify(ours.result)).toBe(JSON.stringify(sdk.result));
        plain++;
      }
    }
    expect(plain).toBeGreaterThan(3);
  });
});
