import { describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  cleanupAfterEach,
  connectHttp,
  fixtureEntry,
  initializeRequest,
  requireBinary,
  seededRandom,
  startHttpProxy,
  watchOutput,
} from "./helpers.ts";

setDefaultTimeout(120_000);

/**
 * A bounded fuzz of the proxy's front door: a few thousand random and mutated messages over stdio
 * and HTTP, from a seeded generator (the seed is in the test name, so a failure can be replayed),
 * after which the proxy must still answer a real call correctly.
 */

const scope = cleanupAfterEach();
const SEED = 20_261_123;

const VALID: object[] = [
  { jsonrpc: "2.0", id: 1, method: "tools/list" },
  {
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "retrieve_tools", arguments: { query: "echo" } },
  },
  {
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "call_tool", arguments: { name: "fixture__echo", arguments: { message: "hi" } } },
  },
  { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 3 } },
  { jsonrpc: "2.0", id: 4, method: "ping" },
];

const ODD_VALUES: unknown[] = [
  null,
  true,
  -1,
  1e308,
  Number.MAX_SAFE_INTEGER + 2,
  "",
  "\u0000\u202e\udc00",
  "x".repeat(5_000),
  [],
  {},
  [[[[[[[]]]]]]],
  { constructor: { prototype: { polluted: true } } },
];

/** Lines written by hand: prototype pollution, deep nesting, duplicate keys. */
const RAW_LINES = [
  '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"__proto__":{"polluted":true},"name":"call_tool"}}',
  `{"jsonrpc":"2.0","id":10,"method":"ping","params":${"[".repeat(5_000)}${"]".repeat(5_000)}}`,
  '{"jsonrpc":"2.0","id":11,"id":12,"method":"ping"}',
  '{"jsonrpc":"2.0","id":{"nested":1},"method":"ping"}',
];

/** One fuzzed line: random bytes, random JSON, or a valid message with one part broken. */
function fuzzedLine(next: () => number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  // A fresh copy each time: shared objects would make cycles once nested into one another.
  const odd = () => structuredClone(pick(ODD_VALUES));
  const roll = next();
  if (roll < 0.05) return pick(RAW_LINES);
  if (roll < 0.15) {
    return Array.from({ length: 1 + Math.floor(next() * 200) }, () =>
      String.fromCharCode(Math.floor(next() * 0x7f) + 1),
    )
      .join("")
      .replace(/\n/g, " ");
  }
  if (roll < 0.3) return JSON.stringify(odd());
  const message = structuredClone(pick(VALID)) as Record<string, unknown>;
  const keys = ["jsonrpc", "id", "method", "params", "result", "error"];
  const mutations = 1 + Math.floor(next() * 3);
  for (let i = 0; i < mutations; i++) {
    const key = pick(keys);
    if (next() < 0.3) delete message[key];
    else message[key] = odd();
    if (next() < 0.3 && typeof message.params === "object" && message.params) {
      (message.params as Record<string, unknown>)[pick(["name", "arguments", "_meta", "query"])] = odd();
    }
  }
  const text = JSON.stringify(next() < 0.1 ? [message, message] : message);
  return next() < 0.1 ? text.slice(0, Math.floor(next() * text.length)) : text;
}

/** `serve` over stdio with the fixture server, spoken to line by line, initialized as `client`. */
async function initializedStdioProxy(client: string) {
  const sandbox = scope.sandbox();
  sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() } });
  const child = Bun.spawn(
    [requireBinary(), "serve", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
    { env: sandbox.env(), stdin: "pipe", stdout: "pipe", stderr: "pipe" },
  );
  scope.defer(() => child.kill());
  const stdout = watchOutput(child.stdout);
  watchOutput(child.stderr);
  const send = (line: string) => {
    child.stdin.write(`${line}\n`);
    child.stdin.flush();
  };
  send(JSON.stringify(initializeRequest("init", client)));
  await stdout.waitFor(/"id":"init"/, 15_000);
  send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  return { child, stdout, send };
}

describe(`fuzzing the front door (seed ${SEED})`, () => {
  test("3,000 random and mutated lines on stdio, then a real call is answered", async () => {
    const { child, stdout, send } = await initializedStdioProxy("fuzz");
    const next = seededRandom(SEED);
    for (let i = 0; i < 3_000; i++) {
      send(fuzzedLine(next));
      if (i % 200 === 0) await Bun.sleep(5);
    }
    send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: "final",
        method: "tools/call",
        params: {
          name: "call_tool",
          arguments: { name: "fixture__echo", arguments: { message: "still here" } },
        },
      }),
    );
    await stdout.waitFor(/"id":"final"/, 30_000);
    const final = stdout
      .text()
      .split("\n")
      .find((line) => line.includes('"id":"final"'))!;
    expect(JSON.parse(final).result.content).toEqual([{ type: "text", text: "fixture echo: still here" }]);
    expect(child.exitCode).toBeNull();
    // Every line out is JSON-RPC: nothing else ever reaches stdout.
    for (const line of stdout.text().split("\n").filter(Boolean))
      expect(JSON.parse(line).jsonrpc).toBe("2.0");
  });

  test("1,000 random and mutated bodies over HTTP, then a real call is answered", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() } });
    const proxy = await startHttpProxy(sandbox);
    scope.defer(() => proxy.stop());
    const client = await connectHttp(proxy.url);
    scope.defer(() => client.close());
    const session = (client.transport as unknown as { sessionId?: string }).sessionId!;
    const next = seededRandom(SEED + 1);
    const statuses = new Set<number>();
    for (let i = 0; i < 1_000; i++) {
      const response = await fetch(proxy.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-06-18",
          ...(next() < 0.8 ? { "mcp-session-id": session } : {}),
        },
        body: fuzzedLine(next),
      });
      statuses.add(response.status);
      await response.body?.cancel();
    }
    expect([...statuses].filter((status) => status >= 500)).toEqual([]);
    const result = await client.callTool({
      name: "call_tool",
      arguments: { name: "fixture__echo", arguments: { message: "still here" } },
    });
    expect(result.content).toEqual([{ type: "text", text: "fixture echo: still here" }]);
  });
});

describe("attacker: the plain way for tools/call (src/server/calls/plain-tool-calls.ts)", () => {
  /**
   * Each odd call is sent twice: as it is, and with one more params key, which the plain checks
   * refuse and the SDK's schema drops, so that copy goes the SDK's whole way to the same handler.
   * Both must be answered alike, whatever the call holds.
   */
  test("every odd tools/call is answered as the SDK's way answers it (stdio)", async () => {
    const { child, stdout, send } = await initializedStdioProxy("attacker");
    const echo = (args: string) =>
      `{"name":"call_tool","arguments":{"name":"fixture__echo","arguments":${args}}}`;
    let deep = '{"message":"deep"}';
    for (let i = 0; i < 500; i++) deep = `{"a":${deep}}`;
    // Params as JSON text, so that `__proto__` arrives as a key, as it would on the wire.
    const params = [
      echo('{"message":"hi"}'),
      `{"_meta":{"progressToken":7},${echo('{"message":"with a token"}').slice(1)}`,
      `{"_meta":{"x":1,"progressToken":"t"},${echo('{"message":"token last"}').slice(1)}`,
      `{"_meta":{"progressToken":1.5},${echo('{"message":"bad token"}').slice(1)}`,
      `{"_meta":{"progressToken":9007199254740993},${echo('{"message":"unsafe token"}').slice(1)}`,
      `{"_meta":{"__proto__":{"progressToken":1}},${echo('{"message":"proto meta"}').slice(1)}`,
      echo('{"__proto__":{"message":"from the prototype"}}'),
      echo('{"__proto__":{"x":1},"message":"own"}'),
      '{"name":"call_tool","arguments":{"__proto__":{"name":"fixture__echo"},"arguments":{"message":"x"}}}',
      '{"name":"call_tool","arguments":{"name":"fixture__echo","__proto__":{"arguments":{"message":"x"}}}}',
      echo('"{\\"message\\":\\"as json text\\"}"'),
      echo(`{"message":${JSON.stringify("x".repeat(200_000))}}`),
      echo(`{"message":${JSON.stringify('\u0000\u202e\udc00 " \\ é 😀')}}`),
      echo(deep),
      '{"name":"call_tool"}',
      '{"name":"call_tool","arguments":[1,2]}',
      '{"name":"call_tool","arguments":"text"}',
      '{"name":"call_tool","arguments":null}',
      '{"name":5}',
      '{"name":"__proto__"}',
      '{"name":"constructor","arguments":{}}',
      '{"name":"fixture__echo","arguments":{"message":"not a tool here"}}',
      '{"name":"retrieve_tools","arguments":{"query":"echo"}}',
    ];
    params.forEach((text, at) => {
      send(`{"jsonrpc":"2.0","id":"plain-${at}","method":"tools/call","params":${text}}`);
      const forced = text.replace(/^\{/, '{"io.mcpproxy.test/sdk-way":true,');
      send(`{"jsonrpc":"2.0","id":"sdk-${at}","method":"tools/call","params":${forced}}`);
    });
    send(`{"jsonrpc":"2.0","id":"after","method":"tools/call","params":${params[0]}}`);
    const answers = new Map<string, { result?: unknown; error?: unknown }>();
    const read = () => {
      for (const line of stdout.text().split("\n").filter(Boolean)) {
        const message = JSON.parse(line) as { id?: unknown; result?: unknown; error?: unknown };
        if (typeof message.id === "string")
          answers.set(message.id, { result: message.result, error: message.error });
      }
    };
    // Until the last call is answered and nothing more comes: a call the SDK does not take as a
    // request (a progress token that is not a string or safe integer) is never answered, either way.
    let seen = -1;
    for (let waited = 0; waited < 60_000 && (!answers.has("after") || seen !== answers.size); waited += 300) {
      seen = answers.size;
      await Bun.sleep(300);
      read();
    }
    expect(answers.has("after")).toBe(true);
    for (const at of params.keys())
      expect([at, answers.has(`plain-${at}`)]).toEqual([at, answers.has(`sdk-${at}`)]);
    expect(answers.size).toBeGreaterThan(params.length);
    // A large result is kept under an id of its own, until a time of its own.
    const same = (answer: unknown) =>
      JSON.parse(
        JSON.stringify(answer ?? null)
          .replace(/mcpproxy:\/\/results\/[\w-]+/g, "mcpproxy://results/ID")
          .replace(/until [\dT:-]+Z/g, "until TIME"),
      );
    for (const at of params.keys()) {
      expect({ at, ...same(answers.get(`plain-${at}`)) }).toEqual({ at, ...same(answers.get(`sdk-${at}`)) });
    }
    // The odd ones changed nothing: a plain call after them is answered as ever.
    expect(answers.get("after")?.result).toEqual({
      content: [{ type: "text", text: "fixture echo: hi" }],
    });
    expect(child.exitCode).toBeNull();
  });
});
