import { describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/client";
import { type CallToolResult, InMemoryTransport, Server } from "@modelcontextprotocol/server";
import { seededRandom } from "../../../tests/helpers.ts";
import { handedRequest, isPlainCallRequest, servePlainToolCalls } from "./plain-tool-calls.ts";

type Checked = { ok: boolean; value?: { params?: unknown } };

/** The SDK's own check of a tools/call request on a server of `era`. */
function sdkRequestCheck(era: "modern" | "legacy") {
  const server = new Server({ name: "t", version: "1" }, { capabilities: { tools: {} } });
  if (era === "modern")
    (server as unknown as { _negotiatedProtocolVersion: string })._negotiatedProtocolVersion = "2026-07-28";
  const codec = (
    server as unknown as { _wireCodec(): { validateRequest(m: string, v: unknown): Checked } }
  )._wireCodec();
  return (request: unknown) => codec.validateRequest("tools/call", request);
}

const parsed = (json: string) => JSON.parse(json) as unknown;
const call = (params: unknown) => ({ method: "tools/call", params });

const REQUESTS: unknown[] = [
  call({ name: "echo" }),
  call({ name: "echo", arguments: { message: "hi" } }),
  call({ name: "echo", arguments: {}, _meta: { progressToken: 3 } }),
  call({ name: "echo", _meta: { progressToken: "t", other: { a: 1 } } }),
  call({ _meta: {}, name: "order" }),
  call({ name: "echo", _meta: { progressToken: 1.5 } }),
  call({ name: "echo", _meta: { progressToken: 2 ** 60 } }),
  call({ name: "echo", _meta: { progressToken: null } }),
  call({ name: "echo", _meta: { "io.modelcontextprotocol/related-task": { taskId: "x" } } }),
  call({ name: "echo", task: { ttl: 5 } }),
  call({ name: "echo", extra: 1 }),
  call({ name: 5 }),
  call({ arguments: {} }),
  call({ name: "echo", arguments: [1, 2] }),
  call({ name: "echo", arguments: "text" }),
  call({ name: "echo", arguments: null }),
  call(null),
  call([]),
  { method: "tools/list", params: { name: "x" } },
  parsed('{"method":"tools/call","params":{"name":"a","arguments":{"__proto__":{"polluted":1},"b":1}}}'),
  parsed('{"method":"tools/call","params":{"name":"a","_meta":{"__proto__":{"progressToken":1}}}}'),
  parsed('{"method":"tools/call","params":{"name":"a","__proto__":{"name":"b"}}}'),
  parsed('{"method":"tools/call","params":{"name":"a","arguments":{"deep":{"__proto__":{"x":1}}}}}'),
];

function randomRequests(count: number): unknown[] {
  const random = seededRandom(11);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const values = [true, 0, 1.5, -3, 2 ** 55, "s", null, [], {}, { a: 1 }, '{"__proto__":{"x":1}}'];
  const requests: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const entries: string[] = [];
    for (const key of ["name", "arguments", "_meta", "task", "other", "__proto__"]) {
      if (random() >= (key === "name" ? 0.95 : 0.4)) continue;
      const value = pick(values);
      const json =
        key === "_meta" && random() < 0.6
          ? `{"progressToken":${JSON.stringify(pick(values))}}`
          : key === "name" && random() < 0.8
            ? '"tool"'
            : typeof value === "string" && value.startsWith("{")
              ? value
              : JSON.stringify(value);
      entries.push(`${JSON.stringify(key)}:${json}`);
    }
    if (random() < 0.3) entries.reverse();
    requests.push(parsed(`{"method":"tools/call","params":{${entries.join(",")}}}`));
  }
  return requests;
}

describe("a plain tools/call request is what the SDK's checks make of it", () => {
  for (const era of ["legacy", "modern"] as const) {
    test(`${era}: every request taken as plain passes the SDK's check, its params handed over as the SDK's parse hands them`, () => {
      const check = sdkRequestCheck(era);
      let plain = 0;
      for (const request of [...REQUESTS, ...randomRequests(3000)]) {
        if (!isPlainCallRequest(request)) continue;
        plain++;
        const sdk = check(request);
        expect(sdk.ok).toBe(true);
        expect(JSON.stringify(sdk.value?.params)).toBe(JSON.stringify(handedRequest(request).params));
      }
      expect(plain).toBeGreaterThan(100);
    });
  }

  test("what the checks drop, rebuild or refuse is never taken as plain", () => {
    for (const at of [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]) {
      expect(isPlainCallRequest(REQUESTS[at])).toBe(false);
    }
    // A `__proto__` key below the arguments' top level is passed as it is by both ways.
    expect(isPlainCallRequest(REQUESTS[22])).toBe(true);
  });
});

/** Results a handler may return, plain and not, and one the schema refuses. */
const RESULTS: unknown[] = [
  { content: [{ type: "text", text: "plain" }] },
  { content: [{ type: "text", text: "plain" }], isError: true },
  { content: [{ type: "text", text: "a" }], structuredContent: { n: 1 } },
  { content: [{ type: "text", text: "extra key", more: 1 }] },
  { content: [{ type: "image", data: "aGk=", mimeType: "image/png" }] },
  { structuredContent: { no: "content" } },
  { content: [{ type: "text", text: "a" }], _meta: { own: 1 } },
  { content: [{ type: "text", text: 5 }] },
  { content: [{ type: "text", text: "a" }], isError: "yes" },
  { isError: false, content: [{ type: "text", text: "out of order" }] },
  { structuredContent: { n: 1 }, isError: true, content: [{ type: "text", text: "out of order" }] },
];

async function serve(plain: boolean) {
  const server = new Server({ name: "t", version: "1" }, { capabilities: { tools: {} } });
  const handler = async (request: { params: { name: string; arguments?: Record<string, unknown> } }) => {
    const at = Number(request.params.arguments?.at);
    if (request.params.name === "args") {
      return { content: [{ type: "text" as const, text: JSON.stringify(request.params) }] };
    }
    return RESULTS[at] as CallToolResult;
  };
  if (plain) servePlainToolCalls(server, handler as never);
  else server.setRequestHandler("tools/call", handler as never);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "t", version: "1" });
  await client.connect(clientSide);
  return client;
}

describe("the plain way answers every call as the SDK's way does (2025, in memory)", () => {
  test("results plain and not, a result the schema refuses, and odd requests", async () => {
    const [sdk, plain] = await Promise.all([serve(false), serve(true)]);
    const both = async (params: Record<string, unknown>) => {
      const answer = (client: Client) =>
        client.request({ method: "tools/call", params } as never).then(
          (value) => ({ value }),
          (error: Error) => ({ error: error.message }),
        );
      return [await answer(sdk), await answer(plain)];
    };
    for (const at of RESULTS.keys()) {
      const [a, b] = await both({ name: "echo", arguments: { at } });
      // To the byte: the same keys in the same order.
      expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    }
    for (const params of [
      { name: "args", arguments: { a: 1 }, _meta: { progressToken: "p", x: 1 } },
      { name: "args", arguments: { a: 1 }, extra: "dropped" },
      { name: "args", task: { ttl: 1 } },
      { name: "args", arguments: [1] },
      JSON.parse('{"name":"args","arguments":{"__proto__":{"x":1},"b":2}}'),
    ]) {
      const [a, b] = await both(params);
      expect(b).toEqual(a);
    }
    await Promise.all([sdk.close(), plain.close()]);
  });
});
