import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { type ReceivedSpan, startOtlpReceiver } from "./fixtures/otlp-receiver.ts";
import {
  cleanupAfterEach,
  connectStdio,
  eventually,
  fixtureEntry,
  freePort,
  ROOT,
  type Sandbox,
  startHttpFixture,
  startHttpProxy,
} from "./helpers.ts";

/**
 * Traces through the compiled binary (src/tracing/, `mcpproxy.traces`): spans of retrieve_tools and
 * of each forwarded call reach a real OTLP receiver with their attributes and parent links; a
 * client's traceparent (HTTP header or `_meta`) becomes the parent; upstreams get the proxy's own
 * context (HTTP headers, `_meta`); nothing leaves while traces are off; a collector that is down or
 * hangs costs no call; a malformed or oversized context is ignored; spans are sent at shutdown.
 */
setDefaultTimeout(60_000);
const scope = cleanupAfterEach();

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";
const CLIENT_TRACEPARENT = `00-${TRACE}-${PARENT}-01`;
const CAPABILITIES_FIXTURE = join(ROOT, "tests", "fixtures", "capabilities-server.ts");

const textOf = (result: unknown) =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");

function receiver(mode: "ok" | "hang" = "ok") {
  const started = startOtlpReceiver(mode);
  scope.defer(() => started.stop());
  return started;
}

async function webFixture() {
  const web = await startHttpFixture("web");
  scope.defer(() => web.stop());
  return web;
}

/** `mcpproxy.traces` on, to `endpoint`, sent every 50 ms unless `traces` says otherwise. */
/** `serve` over stdio with a client, closed when the test ends, even when it fails. */
async function stdioProxy(...args: Parameters<typeof connectStdio>) {
  const proxy = await connectStdio(...args);
  scope.defer(() => proxy.close());
  return proxy;
}

function tracesOn(endpoint: string, traces: Record<string, unknown> = {}) {
  return { traces: { enabled: true, endpoint, batchDelayMs: 50, ...traces } };
}

async function httpProxy(sandbox: Sandbox, env: Record<string, string> = {}) {
  const proxy = await startHttpProxy(sandbox, [], env);
  scope.defer(() => proxy.stop());
  return proxy;
}

/** A v1 SDK client over streamable HTTP that sends `headers` with every request. */
async function httpClient(url: URL, headers: Record<string, string> = {}) {
  const client = new Client({ name: "trace-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  scope.defer(() => client.close());
  return client;
}

async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  meta?: Record<string, unknown>,
) {
  return CallToolResultSchema.parse(
    await client.callTool({
      name: "call_tool",
      arguments: { name, arguments: args },
      ...(meta ? { _meta: meta } : {}),
    }),
  );
}

async function spansNamed(
  collector: ReturnType<typeof receiver>,
  names: string[],
): Promise<ReceivedSpan[][]> {
  await eventually(
    () => names.every((name) => collector.spans.some((span) => span.name === name)),
    (found) => found,
    15_000,
  );
  expect(collector.rejected).toEqual([]);
  return names.map((name) => collector.spans.filter((span) => span.name === name));
}

const only = (spans: ReceivedSpan[] | undefined): ReceivedSpan => {
  expect(spans).toHaveLength(1);
  return spans![0]!;
};

describe("spans and trace context", () => {
  test("retrieve_tools and call_tool are spans under the client's HTTP traceparent, and the HTTP upstream gets the proxy's", async () => {
    const collector = receiver();
    const web = await webFixture();
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { web: { url: web.url } }, mcpproxy: tracesOn(collector.url) });
    const proxy = await httpProxy(sandbox);
    const client = await httpClient(proxy.url, { traceparent: CLIENT_TRACEPARENT, tracestate: "vendor=abc" });

    const found = await client.callTool({ name: "retrieve_tools", arguments: { query: "echo a message" } });
    expect(found.isError).toBeFalsy();
    const headers = JSON.parse(textOf(await callTool(client, "web__show_request_headers"))) as Record<
      string,
      string
    >;
    const echoed = await callTool(client, "web__echo", { message: "ARGUMENT-VALUE-7731" });
    expect(textOf(echoed)).toContain("ARGUMENT-VALUE-7731");

    const [retrieve, calls, upstream, echoSpans] = await spansNamed(collector, [
      "tools/call retrieve_tools",
      "tools/call call_tool",
      "tools/call show_request_headers",
      "tools/call echo",
    ]);
    const search = only(retrieve);
    expect(search).toMatchObject({
      service: "mcpproxy",
      scope: "mcpproxy",
      kind: "server",
      traceId: TRACE,
      parentSpanId: PARENT,
      traceState: "vendor=abc",
      status: "unset",
    });
    expect(search.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "retrieve_tools",
      "gen_ai.operation.name": "execute_tool",
      "network.transport": "tcp",
      "mcpproxy.outcome": "ok",
    });
    expect(search.endNanos).toBeGreaterThanOrEqual(search.startNanos);

    // The call's server span, under the client's span; the forwarded request's client span under it.
    const forwarded = only(upstream);
    const call = calls!.find((span) => span.spanId === forwarded.parentSpanId)!;
    expect(call).toBeDefined();
    expect(call).toMatchObject({ kind: "server", traceId: TRACE, parentSpanId: PARENT });
    expect(call.attributes).toMatchObject({
      "gen_ai.tool.name": "call_tool",
      "mcpproxy.server": "web",
      "mcpproxy.tool": "web__show_request_headers",
      "mcpproxy.outcome": "ok",
      "mcpproxy.queue.wait_ms": 0,
    });
    expect(forwarded).toMatchObject({
      kind: "client",
      traceId: TRACE,
      traceState: "vendor=abc",
      status: "unset",
    });
    expect(forwarded.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "show_request_headers",
      "mcpproxy.server": "web",
      "mcpproxy.tool": "web__show_request_headers",
      "mcpproxy.outcome": "ok",
      "mcpproxy.queue.wait_ms": 0,
    });
    expect(forwarded.startNanos).toBeGreaterThanOrEqual(call.startNanos);
    expect(forwarded.endNanos).toBeLessThanOrEqual(call.endNanos);

    // The upstream was sent the proxy's own span as the parent, in the client's trace.
    expect(headers.traceparent).toBe(`00-${TRACE}-${forwarded.spanId}-01`);
    expect(headers.tracestate).toBe("vendor=abc");

    // Names and outcomes only: neither the arguments nor the result are recorded.
    expect(only(echoSpans).attributes["mcpproxy.tool"]).toBe("web__echo");
    expect(
      JSON.stringify(collector.spans, (_, value) => (typeof value === "bigint" ? String(value) : value)),
    ).not.toContain("ARGUMENT-VALUE-7731");
  });

  test("over stdio the client's traceparent in _meta is the parent, the stdio upstream gets the proxy's in _meta, and spans are sent at shutdown", async () => {
    const collector = receiver();
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: { local: fixtureEntry({ args: ["--trace-tools"] }) },
      // Nothing is sent before the proxy stops: only the flush at shutdown can deliver these spans.
      mcpproxy: tracesOn(collector.url, { batchDelayMs: 600_000 }),
    });
    const proxy = await stdioProxy(sandbox);
    const meta = JSON.parse(
      textOf(
        await callTool(proxy.client, "local__show_request_meta", {}, { traceparent: CLIENT_TRACEPARENT }),
      ),
    ) as Record<string, unknown>;
    expect(String(meta.traceparent)).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    await Bun.sleep(300);
    expect(collector.requests).toHaveLength(0);

    await proxy.close();
    const [calls, upstream] = await spansNamed(collector, [
      "tools/call call_tool",
      "tools/call show_request_meta",
    ]);
    const call = only(calls);
    const forwarded = only(upstream);
    expect(call).toMatchObject({ traceId: TRACE, parentSpanId: PARENT, kind: "server" });
    expect(call.attributes["network.transport"]).toBe("pipe");
    expect(forwarded).toMatchObject({ traceId: TRACE, parentSpanId: call.spanId, kind: "client" });
    expect(meta.traceparent).toBe(`00-${TRACE}-${forwarded.spanId}-01`);
  });

  test("a client's unsampled trace is not recorded, yet the upstream is told so in the same trace", async () => {
    const collector = receiver();
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: { local: fixtureEntry({ args: ["--trace-tools"] }) },
      mcpproxy: tracesOn(collector.url),
    });
    const { client } = await stdioProxy(sandbox);
    const meta = JSON.parse(
      textOf(
        await callTool(client, "local__show_request_meta", {}, { traceparent: `00-${TRACE}-${PARENT}-00` }),
      ),
    ) as Record<string, unknown>;
    expect(String(meta.traceparent)).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-00$`));
    await callTool(client, "local__echo", { message: "sampled" });
    await spansNamed(collector, ["tools/call echo"]);
    expect(collector.spans.filter((span) => span.traceId === TRACE)).toEqual([]);
  });

  test("outcomes and queue waits: isError, timeout, limited, and a call that waited for its turn", async () => {
    const collector = receiver();
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: {
        slow: { ...fixtureEntry(), callTimeoutMs: 300 },
        door: { ...fixtureEntry({ args: ["--call-record"] }), maxConcurrent: 1, queueSize: 5 },
        shut: { ...fixtureEntry({ args: ["--call-record"] }), maxConcurrent: 1, queueSize: 0 },
      },
      mcpproxy: tracesOn(collector.url),
    });
    const { client } = await stdioProxy(sandbox);
    expect((await callTool(client, "slow__always_fails")).isError).toBe(true);
    expect((await callTool(client, "slow__sleep_then_answer", { ms: 5_000 })).isError).toBe(true);
    const queued = await Promise.all([
      callTool(client, "door__held_call", { ms: 400, tag: "first" }),
      callTool(client, "door__held_call", { ms: 10, tag: "second" }),
    ]);
    expect(queued.map((result) => result.isError ?? false)).toEqual([false, false]);
    const refused = await Promise.all([
      callTool(client, "shut__held_call", { ms: 400, tag: "in" }),
      callTool(client, "shut__held_call", { ms: 10, tag: "out" }),
    ]);
    expect(refused.filter((result) => result.isError)).toHaveLength(1);

    const [failing, sleeping] = await spansNamed(collector, [
      "tools/call always_fails",
      "tools/call sleep_then_answer",
    ]);
    const held = await eventually(
      () => collector.spans.filter((span) => span.name === "tools/call held_call"),
      (spans) => spans.length === 4,
      15_000,
    );
    expect(only(failing)).toMatchObject({ status: "error" });
    expect(only(failing).attributes).toMatchObject({
      "mcpproxy.outcome": "isError",
      "error.type": "tool_error",
    });
    expect(only(sleeping)).toMatchObject({ status: "error" });
    expect(only(sleeping).attributes).toMatchObject({
      "mcpproxy.outcome": "timeout",
      "error.type": "timeout",
    });
    // The call's own span says timeout too, though the client was answered an isError result.
    const sleepCall = collector.spans.find((span) => span.spanId === only(sleeping).parentSpanId);
    expect(sleepCall?.attributes["mcpproxy.outcome"]).toBe("timeout");

    const door = held.filter((span) => span.attributes["mcpproxy.server"] === "door");
    const waits = door.map((span) => Number(span.attributes["mcpproxy.queue.wait_ms"])).sort((a, b) => a - b);
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBe(0);
    expect(waits[1]).toBeGreaterThan(0);
    const shut = held.filter((span) => span.attributes["mcpproxy.server"] === "shut");
    expect(shut.map((span) => span.attributes["mcpproxy.outcome"]).sort()).toEqual(["limited", "ok"]);
    expect(shut.find((span) => span.attributes["mcpproxy.outcome"] === "limited")?.status).toBe("error");
  });

  test("prompts/get, resources/read, dynamically registered and passthrough tools are traced the same way", async () => {
    const collector = receiver();
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: { caps: { command: process.execPath, args: [CAPABILITIES_FIXTURE] }, fx: fixtureEntry() },
      mcpproxy: tracesOn(collector.url),
    });
    const { client } = await stdioProxy(sandbox);
    await eventually(
      async () => (await client.listPrompts()).prompts.map((prompt) => prompt.name),
      (names) => names.includes("caps__greet"),
      15_000,
    );
    await client.getPrompt({ name: "caps__greet", arguments: { who: "Ada" } });
    await client.readResource({ uri: "mcpproxy://caps/notes://42" });
    const missing = await client
      .readResource({ uri: "mcpproxy://caps/file:///missing/PRIVATE-PATH" })
      .catch((e) => e);
    expect(missing).toBeInstanceOf(Error);
    const dynamic = await stdioProxy(sandbox, {}, ["--routing", "dynamic"]);
    await dynamic.client.callTool({ name: "retrieve_tools", arguments: { query: "add two numbers" } });
    expect(
      (await dynamic.client.callTool({ name: "fx__add_numbers", arguments: { a: 2, b: 3 } })).isError,
    ).toBeFalsy();
    const passthrough = await stdioProxy(sandbox, {}, ["--passthrough", "fx"]);
    await passthrough.client.callTool({ name: "echo", arguments: { message: "direct" } });

    const [served, forwarded, reads, added, echo] = await spansNamed(collector, [
      "prompts/get caps__greet",
      "prompts/get greet",
      "resources/read",
      "tools/call fx__add_numbers",
      "tools/call echo",
    ]);
    expect(only(served).attributes).toMatchObject({
      "mcp.method.name": "prompts/get",
      "gen_ai.prompt.name": "caps__greet",
    });
    expect(only(forwarded)).toMatchObject({ kind: "client", parentSpanId: only(served).spanId });
    expect(only(forwarded).attributes).toMatchObject({ "mcpproxy.server": "caps", "mcpproxy.outcome": "ok" });

    // Two reads, each a server span and a client span; a resource's URI is never recorded.
    const allReads = await eventually(
      () => collector.spans.filter((span) => span.name === "resources/read"),
      (spans) => spans.length === 4,
      15_000,
    );
    expect(reads!.length).toBeGreaterThan(0);
    const failedRead = allReads.filter((span) => span.attributes["mcpproxy.outcome"] === "error");
    expect(failedRead.map((span) => span.kind).sort()).toEqual(["client", "server"]);
    for (const span of failedRead) {
      // The JSON-RPC error the proxy was answered (the SDK speaks of a missing resource as -32602).
      expect(String(span.attributes["rpc.response.status_code"])).toMatch(/^-32\d{3}$/);
      expect(span.attributes["error.type"]).toBe(span.attributes["rpc.response.status_code"]!);
    }
    expect(allReads.filter((span) => span.attributes["mcpproxy.outcome"] === "ok")).toHaveLength(2);
    const dump = JSON.stringify(collector.spans, (_, value) =>
      typeof value === "bigint" ? String(value) : value,
    );
    expect(dump).not.toContain("PRIVATE-PATH");
    expect(dump).not.toContain("notes://42");

    // Dynamic routing: the registered tool is called by its public name.
    const registered = only(added);
    expect(registered.attributes).toMatchObject({
      "gen_ai.tool.name": "fx__add_numbers",
      "mcpproxy.server": "fx",
    });
    const addUpstream = collector.spans.find((span) => span.name === "tools/call add_numbers");
    expect(addUpstream?.parentSpanId).toBe(registered.spanId);

    // In passthrough the client calls the tool by its own name: that is the server span's name too.
    const [own, upstream] = [echo!.find((s) => s.kind === "server"), echo!.find((s) => s.kind === "client")];
    expect(upstream?.parentSpanId).toBe(own?.spanId);
    expect(own?.attributes).toMatchObject({ "gen_ai.tool.name": "echo", "mcpproxy.tool": "fx__echo" });
  });

  test("a 2026-07-28 client's traceparent header is the parent of its stateless request", async () => {
    const collector = receiver();
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() }, mcpproxy: tracesOn(collector.url) });
    const proxy = await httpProxy(sandbox);
    const client = new ModernClient(
      { name: "modern-trace", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(
      new ModernHttp(proxy.url, { requestInit: { headers: { traceparent: CLIENT_TRACEPARENT } } }),
    );
    scope.defer(() => client.close());
    await client.callTool({ name: "retrieve_tools", arguments: { query: "echo" } });
    const [spans] = await spansNamed(collector, ["tools/call retrieve_tools"]);
    expect(only(spans)).toMatchObject({ traceId: TRACE, parentSpanId: PARENT });
    expect(only(spans).attributes["mcp.protocol.version"]).toBe("2026-07-28");
  });
});

describe("off, down, and hostile", () => {
  test("off by default: nothing reaches the collector the environment names, and upstreams get no trace context", async () => {
    const collector = receiver();
    const web = await webFixture();
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { web: { url: web.url } } });
    const proxy = await httpProxy(sandbox, {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`,
    });
    const client = await httpClient(proxy.url, { traceparent: CLIENT_TRACEPARENT });
    await client.callTool({ name: "retrieve_tools", arguments: { query: "echo" } });
    const headers = JSON.parse(textOf(await callTool(client, "web__show_request_headers"))) as Record<
      string,
      string
    >;
    expect(headers.traceparent).toBeUndefined();
    expect(headers.tracestate).toBeUndefined();
    await client.close();
    expect(await proxy.stop()).toBe(0);
    expect(collector.requests).toHaveLength(0);
    expect(proxy.stderr.text()).not.toContain("[traces]");
  });

  test("a collector that is down neither fails nor holds up a call: every call answers, the drops are counted", async () => {
    const port = await freePort();
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: { fx: fixtureEntry() },
      mcpproxy: tracesOn(`http://127.0.0.1:${port}/v1/traces`, { batchSize: 5, timeoutMs: 500 }),
    });
    const proxy = await stdioProxy(sandbox);
    let answered = 0;
    for (let i = 0; i < 60; i++) {
      const result = await callTool(proxy.client, "fx__echo", { message: `call ${i}` });
      if (!result.isError && textOf(result) === `fixture echo: call ${i}`) answered++;
    }
    expect(answered).toBe(60);
    await proxy.close();
    const stderr = await eventually(
      () => proxy.stderr(),
      (text) => text.includes("shutting down"),
      10_000,
    );
    expect(stderr).toMatch(
      /\[traces\] \d+ spans? dropped \(\d+ in all since the start\): the collector could not be reached/,
    );
    // One warning for the first drops, one summary at the end: not one a batch.
    expect(stderr.match(/spans? dropped/g)?.length ?? 0).toBeLessThanOrEqual(2);
  });

  test("a collector that never answers gets one export at a time, and every call still answers", async () => {
    const collector = receiver("hang");
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: { fx: fixtureEntry() },
      mcpproxy: tracesOn(collector.url, { batchSize: 2, maxQueueSize: 10, timeoutMs: 60_000 }),
    });
    const { client } = await stdioProxy(sandbox);
    let answered = 0;
    for (let i = 0; i < 40; i++) {
      const result = await callTool(client, "fx__echo", { message: `call ${i}` });
      if (!result.isError) answered++;
    }
    expect(answered).toBe(40);
    expect(collector.maxOpen()).toBe(1);
    expect(collector.requests).toHaveLength(1);
  });

  test("attacker: a malformed or oversized trace context is ignored, never reflected, and never fails a call", async () => {
    const collector = receiver();
    const web = await webFixture();
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { web: { url: web.url } }, mcpproxy: tracesOn(collector.url) });
    const proxy = await httpProxy(sandbox);
    const hostile = [
      `00-${TRACE.toUpperCase()}-${PARENT}-01`,
      `00-${TRACE}-${PARENT}-01-INJECTED`,
      `ff-${TRACE}-${PARENT}-01`,
      `00-${"0".repeat(32)}-${PARENT}-01`,
      `00-${TRACE}-${PARENT}-01${"A".repeat(10_000)}`,
    ];
    const seen: Record<string, string>[] = [];
    for (const traceparent of hostile) {
      const client = await httpClient(proxy.url, { traceparent, tracestate: "evil=INJECTED" });
      seen.push(JSON.parse(textOf(await callTool(client, "web__show_request_headers"))));
    }
    // In `_meta`, where any JSON may come.
    const plain = await httpClient(proxy.url);
    for (const traceparent of [
      { traceId: TRACE },
      42,
      "x".repeat(100_000),
      `00-${TRACE}-${PARENT}-01\r\nX-Injected: 1`,
    ]) {
      seen.push(
        JSON.parse(
          textOf(
            await callTool(
              plain,
              "web__show_request_headers",
              {},
              { traceparent, tracestate: "evil=INJECTED" },
            ),
          ),
        ),
      );
    }
    // A valid parent with a tracestate far over the bound: the parent is kept, the tracestate cut.
    const long = Array.from({ length: 32 }, (_, i) => `k${i}=${"v".repeat(60)}`).join(",");
    const bounded = JSON.parse(
      textOf(
        await callTool(
          plain,
          "web__show_request_headers",
          {},
          { traceparent: CLIENT_TRACEPARENT, tracestate: long },
        ),
      ),
    ) as Record<string, string>;

    for (const headers of seen) {
      expect(headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      expect(headers.traceparent).not.toContain(TRACE);
      expect(headers.tracestate).toBeUndefined();
    }
    expect(new Set(seen.map((headers) => headers.traceparent?.slice(3, 35))).size).toBe(seen.length);
    expect(bounded.traceparent).toStartWith(`00-${TRACE}-`);
    expect(bounded.tracestate!.length).toBeLessThanOrEqual(512);
    expect(long.startsWith(bounded.tracestate!)).toBe(true);

    await eventually(
      () => collector.spans.filter((span) => span.name === "tools/call call_tool").length,
      (count) => count === seen.length + 1,
      15_000,
    );
    const dump = JSON.stringify(collector.spans, (_, value) =>
      typeof value === "bigint" ? String(value) : value,
    );
    expect(dump).not.toContain("INJECTED");
    expect(dump).not.toContain("AAAA");
    expect(dump).not.toContain("xxxx");
    const roots = collector.spans.filter(
      (span) => span.name === "tools/call call_tool" && span.traceId !== TRACE,
    );
    expect(roots).toHaveLength(seen.length);
    for (const root of roots) expect(root.parentSpanId).toBe("");
    expect(collector.rejected).toEqual([]);
  });

  test("attacker: an agent cannot point the traces elsewhere through upstream_servers", async () => {
    const collector = receiver();
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() }, mcpproxy: tracesOn(collector.url) });
    const { client } = await stdioProxy(sandbox);
    for (const key of ["traces", "mcpproxy"]) {
      const refused = await client.callTool({
        name: "upstream_servers",
        arguments: {
          operation: "add",
          name: `x${key}`,
          server: { ...fixtureEntry(), [key]: { traces: { endpoint: "http://attacker.example/v1/traces" } } },
        },
      });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain(`${key}: this key is not for an agent to set`);
    }
  });
});
