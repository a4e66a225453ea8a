import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  cleanupAfterEach,
  connectStdio,
  eventually,
  fixtureEntry,
  jsonRpcText,
  modernEntry,
  OWN_TOOLS,
  ROOT,
  requireBinary,
  type Sandbox,
  startHttpFixture,
  startHttpProxy,
  watchOutput,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * Issue 22: clients of MCP revision 2026-07-28. The proxy serves them on the same stdio process
 * and the same /mcp endpoint as 2025 clients, choosing the era per request: a modern request
 * carries its version and capabilities in `_meta`, an old client opens with `initialize`. A
 * modern client has no session: it gets one fixed, cacheable tool list whatever `--routing`
 * says, and nothing an upstream asks during its call reaches another client.
 */
const scope = cleanupAfterEach();
const MODERN = "2026-07-28";

const serveArgs = (sandbox: Sandbox, extra: string[] = []) => [
  "serve",
  "--config",
  sandbox.configPath,
  "--data-dir",
  sandbox.dataDir,
  ...extra,
];

/** A v2 client of the proxy over stdio: pinned to 2026-07-28, or `auto` (probe, then fall back). */
async function stdioClient(
  sandbox: Sandbox,
  mode: "pinned" | "auto",
  options: { args?: string[]; env?: Record<string, string>; onStderr?: (text: string) => void } = {},
) {
  const client = new Client(
    { name: `modern-${mode}`, version: "1.0.0" },
    { versionNegotiation: { mode: mode === "pinned" ? { pin: MODERN } : "auto" } },
  );
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: serveArgs(sandbox, options.args),
    env: sandbox.env(options.env),
    stderr: options.onStderr ? "pipe" : "ignore",
  });
  transport.stderr?.on("data", (chunk: Buffer) => options.onStderr?.(chunk.toString()));
  await client.connect(transport);
  scope.defer(() => client.close());
  return client;
}

async function httpClient(url: URL, mode: "pinned" | "auto") {
  const client = new Client(
    { name: `modern-${mode}`, version: "1.0.0" },
    { versionNegotiation: { mode: mode === "pinned" ? { pin: MODERN } : "auto" } },
  );
  await client.connect(new StreamableHTTPClientTransport(url));
  scope.defer(() => client.close());
  return client;
}

async function httpProxy(sandbox: Sandbox, extra: string[] = []) {
  const proxy = await startHttpProxy(sandbox, extra);
  scope.defer(() => proxy.stop());
  return proxy;
}

/** A v2 client pinned to 2026-07-28, of `serve` over stdio or over HTTP (`args`: more serve flags). */
async function pinnedClient(sandbox: Sandbox, kind: "stdio" | "http", args: string[] = []) {
  return kind === "stdio"
    ? stdioClient(sandbox, "pinned", { args })
    : httpClient((await httpProxy(sandbox, args)).url, "pinned");
}

const textOf = (result: unknown) =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");

/** The fixture server (v1 SDK: a 2025 upstream) as the one server behind the proxy. */
function withFixture(sandbox: Sandbox, args: string[] = [], env?: Record<string, string>) {
  sandbox.writeConfig({ mcpServers: { fx: fixtureEntry({ args, ...(env ? { env } : {}) }) } });
}

describe("a 2026-07-28 client of mcpproxy", () => {
  for (const kind of ["stdio", "http"] as const) {
    test(`pinned to 2026-07-28 over ${kind}: discover, the fixed tool list, a search and a call to a 2025 upstream`, async () => {
      const sandbox = scope.sandbox();
      withFixture(sandbox);
      const client = await pinnedClient(sandbox, kind);
      expect(client.getProtocolEra()).toBe("modern");
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      expect(client.getServerVersion()?.name).toBe("mcpproxy");
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(OWN_TOOLS);
      const found = await client.callTool({ name: "retrieve_tools", arguments: { query: "echo a message" } });
      expect(textOf(found)).toContain("fx__echo");
      const echoed = await client.callTool({
        name: "call_tool",
        arguments: { name: "fx__echo", arguments: { message: "from the new era" } },
      });
      expect(echoed.isError).toBeFalsy();
      expect(textOf(echoed)).toContain("from the new era");
    });

    test(`its tool list does not vary with earlier requests, even with --routing dynamic (${kind})`, async () => {
      const sandbox = scope.sandbox();
      withFixture(sandbox);
      const args = ["--routing", "dynamic"];
      const client = await pinnedClient(sandbox, kind, args);
      const before = await client.listTools();
      await client.callTool({ name: "retrieve_tools", arguments: { query: "add two numbers" } });
      const after = await client.listTools();
      expect(after.tools).toEqual(before.tools);
      expect(after.tools.map((tool) => tool.name)).toEqual(OWN_TOOLS);
    });
  }

  // Issue 34, item 9: dynamic and auto routing cannot reach a sessionless client, and nothing said so.
  const SESSIONLESS_LOG = /a client speaking MCP 2026-07-28 is served: --routing (\w+) needs a session/;
  const loggedModes = (text: string) =>
    [...text.matchAll(new RegExp(SESSIONLESS_LOG, "g"))].map((match) => match[1]);
  const notesOf = (result: unknown) =>
    ((result as { structuredContent?: { notes?: string[] } }).structuredContent?.notes ?? []).filter((note) =>
      note.includes("2026-07-28"),
    );

  test("in auto mode over stdio with --routing auto: told once, in its first retrieve_tools answer, and logged once", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox);
    let stderr = "";
    const client = await stdioClient(sandbox, "auto", {
      args: ["--routing", "auto"],
      onStderr: (text) => {
        stderr += text;
      },
    });
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    const first = await client.callTool({ name: "retrieve_tools", arguments: { query: "echo a message" } });
    const notes = notesOf(first);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain("auto routing does not apply");
    expect(notes[0]).toContain("call_tool");
    expect(textOf(first)).toContain("fx__echo");
    const second = await client.callTool({ name: "retrieve_tools", arguments: { query: "add two numbers" } });
    expect(notesOf(second)).toEqual([]);
    const logged = await eventually(
      () => loggedModes(stderr),
      (modes) => modes.length > 0,
      10_000,
    );
    expect(logged).toEqual(["auto"]);
    expect(stderr).toContain("--routing all lists every approved tool");
  });

  test("over HTTP with --routing dynamic: each 2026-07-28 request's search is told (it stands alone), serve logs it once, a 2025 session is not told", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox);
    const proxy = await httpProxy(sandbox, ["--routing", "dynamic"]);
    const modern = await httpClient(proxy.url, "auto");
    const other = await httpClient(proxy.url, "pinned");
    for (const client of [modern, other, modern]) {
      const found = await client.callTool({ name: "retrieve_tools", arguments: { query: "echo a message" } });
      expect(notesOf(found)).toHaveLength(1);
      expect(notesOf(found)[0]).toContain("dynamic routing does not apply");
    }
    const legacy = new V1Client({ name: "legacy", version: "1" });
    await legacy.connect(new V1StreamableHTTPClientTransport(proxy.url));
    scope.defer(() => legacy.close());
    const legacyFound = await legacy.callTool({
      name: "retrieve_tools",
      arguments: { query: "echo a message" },
    });
    expect(notesOf(legacyFound)).toEqual([]);
    expect((legacyFound.structuredContent as { registered?: string[] }).registered).toContain("fx__echo");
    await proxy.stderr.waitFor(SESSIONLESS_LOG, 10_000);
    expect(loggedModes(proxy.stderr.text())).toEqual(["dynamic"]);
  });

  test("in auto mode over stdio: the probe's throw-away proxy starts no upstream", async () => {
    // The v2 SDK's stdio client probes the era on a sibling process it then kills. Before, that
    // sibling started every upstream (this fixture counted two starts for one client).
    const sandbox = scope.sandbox();
    const starts = join(sandbox.dir, "starts.log");
    withFixture(sandbox, [], { FIXTURE_START_LOG: starts });
    const client = await stdioClient(sandbox, "auto");
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    const echoed = await client.callTool({
      name: "call_tool",
      arguments: { name: "fx__echo", arguments: { message: "once" } },
    });
    expect(textOf(echoed)).toContain("once");
    expect(readFileSync(starts, "utf8").trim().split("\n")).toHaveLength(1);
  });

  test("in auto mode over HTTP: served in 2026-07-28 at the first request (no fallback to 2025)", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox);
    const client = await httpClient((await httpProxy(sandbox)).url, "auto");
    expect(client.getProtocolEra()).toBe("modern");
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
  });

  test("over stdio, a first request that is a tools/call (no discover) is answered", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox);
    const child = Bun.spawn([requireBinary(), ...serveArgs(sandbox)], {
      env: sandbox.env(),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
    });
    scope.defer(() => child.kill());
    const out = watchOutput(child.stdout);
    child.stdin.write(
      `${JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: {
          name: "call_tool",
          arguments: { name: "fx__echo", arguments: { message: "first of all" } },
          _meta: envelope(),
        },
      })}\n`,
    );
    child.stdin.flush();
    const line = await out.waitFor(/^(\{.*"id":7\})$/m, 20_000);
    const answer = JSON.parse(line) as { result: { resultType?: string; content: { text: string }[] } };
    expect(answer.result.resultType).toBe("complete");
    expect(answer.result.content[0]?.text).toContain("first of all");
  });
});

/** The `_meta` fields every 2026-07-28 request carries. */
function envelope(capabilities: Record<string, unknown> = {}) {
  return {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  };
}

interface WireAnswer {
  status: number;
  body: { result?: Record<string, unknown>; error?: { code: number; message: string } } | undefined;
}

/** One raw HTTP request to /mcp, its answer read whether it came as JSON or as an SSE stream. */
async function post(
  url: URL,
  message: Record<string, unknown>,
  headers: Record<string, string | undefined> = {},
): Promise<WireAnswer> {
  const method = String(message.method);
  const params = message.params as { name?: string; uri?: string } | undefined;
  const name = params?.name ?? params?.uri;
  const sent: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(name ? { "mcp-name": name } : {}),
  };
  for (const [key, value] of Object.entries(headers)) {
    if (value === undefined) delete sent[key];
    else sent[key] = value;
  }
  const response = await fetch(url, {
    method: "POST",
    headers: sent,
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...message }),
  });
  const data = jsonRpcText(response, await response.text());
  return { status: response.status, body: data ? JSON.parse(data) : undefined };
}

describe("the 2026-07-28 wire at /mcp", () => {
  test("answers discover and lists with cache hints, and every modern protocol error with its code", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox);
    const { url } = await httpProxy(sandbox);

    const discover = await post(url, { method: "server/discover", params: { _meta: envelope() } });
    expect(discover.status).toBe(200);
    expect(discover.body?.result?.supportedVersions).toContain(MODERN);
    expect(discover.body?.result?.resultType).toBe("complete");
    expect(discover.body?.result).toMatchObject({ ttlMs: expect.any(Number), cacheScope: "public" });
    expect(discover.body?.result?.capabilities).toHaveProperty("tools");

    const list = await post(url, { method: "tools/list", params: { _meta: envelope() } });
    expect(list.status).toBe(200);
    expect(((list.body?.result?.tools ?? []) as { name: string }[]).map((tool) => tool.name)).toEqual(
      OWN_TOOLS,
    );
    expect(list.body?.result).toMatchObject({ ttlMs: expect.any(Number), cacheScope: "public" });

    // No MCP-Protocol-Version header: -32020 (header mismatch), HTTP 400.
    const headerless = await post(
      url,
      { method: "tools/list", params: { _meta: envelope() } },
      { "mcp-protocol-version": undefined },
    );
    expect(headerless.status).toBe(400);
    expect(headerless.body?.error?.code).toBe(-32020);
    // Mcp-Name that is not the tool called: -32020.
    const misnamed = await post(
      url,
      {
        method: "tools/call",
        params: { name: "retrieve_tools", arguments: { query: "x" }, _meta: envelope() },
      },
      { "mcp-name": "call_tool" },
    );
    expect(misnamed.status).toBe(400);
    expect(misnamed.body?.error?.code).toBe(-32020);
    // A version the proxy does not speak: -32022, naming the ones it does.
    const future = await post(
      url,
      {
        method: "tools/list",
        params: { _meta: { ...envelope(), "io.modelcontextprotocol/protocolVersion": "2099-01-01" } },
      },
      { "mcp-protocol-version": "2099-01-01" },
    );
    expect(future.status).toBe(400);
    expect(future.body?.error?.code).toBe(-32022);
    // No clientCapabilities in _meta: -32602.
    const capless = await post(url, {
      method: "tools/list",
      params: { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN } },
    });
    expect(capless.status).toBe(400);
    expect(capless.body?.error?.code).toBe(-32602);
    // A method the revision removed: 404, -32601.
    const ping = await post(url, { method: "ping", params: { _meta: envelope() } });
    expect(ping.status).toBe(404);
    expect(ping.body?.error?.code).toBe(-32601);
    // GET without a session: nothing to stream (405), where it was a 400 before.
    const get = await fetch(url, { headers: { accept: "text/event-stream" } });
    expect(get.status).toBe(405);
    // A 2025 request outside any session is still told to initialize first.
    const legacy = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(legacy.status).toBe(400);
    expect(await legacy.text()).toContain("send initialize first");
  });

  test("a modern tools/call answers with resultType, and a missing resource is -32602 (not 2025's -32002)", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: {
        fx: fixtureEntry(),
        caps: {
          command: process.execPath,
          args: [join(ROOT, "tests", "fixtures", "capabilities-server.ts")],
        },
      },
    });
    const { url } = await httpProxy(sandbox);
    const called = await post(url, {
      method: "tools/call",
      params: {
        name: "call_tool",
        arguments: { name: "fx__echo", arguments: { message: "hello" } },
        _meta: envelope(),
      },
    });
    expect(called.status).toBe(200);
    expect(called.body?.result?.resultType).toBe("complete");
    expect(textOf(called.body?.result)).toContain("hello");
    // A URI the proxy never handed out, and one its server says it does not have.
    for (const uri of ["mcpproxy://nowhere/thing", "mcpproxy://caps/file:///missing/notes"]) {
      const missing = await post(url, { method: "resources/read", params: { uri, _meta: envelope() } });
      expect(missing.body?.error, uri).toMatchObject({ code: -32602 });
    }
    const found = await post(url, {
      method: "resources/read",
      params: { uri: "mcpproxy://caps/file:///etc/hostname", _meta: envelope() },
    });
    expect(((found.body?.result?.contents ?? []) as { text: string }[])[0]?.text).toBe("the-host-name");
    // Built from a 2025 server's answer, which says nothing of how long it holds: not to be cached.
    expect(found.body?.result).toMatchObject({ ttlMs: 0, cacheScope: "private" });
  });
});

describe("a modern client's call: progress and cancellation on its own request", () => {
  for (const kind of ["stdio", "http"] as const) {
    test(`progress reaches the caller, and a cancelled call is cancelled upstream (${kind})`, async () => {
      const sandbox = scope.sandbox();
      withFixture(sandbox);
      const client = await pinnedClient(sandbox, kind);
      const call = (name: string, args: Record<string, unknown>, options = {}) =>
        client.callTool({ name: "call_tool", arguments: { name, arguments: args } }, options);
      const progress: number[] = [];
      const counted = await call(
        "fx__count_with_progress",
        { steps: 3, interval_ms: 20 },
        { onprogress: (update: { progress: number }) => progress.push(update.progress) },
      );
      expect(counted.isError).toBeFalsy();
      // Every notice the server sent before its result, the last one too, arrives before the result.
      expect(progress).toEqual([1, 2, 3]);

      // Over HTTP the client cancels by closing its request's stream; over stdio it says so.
      const controller = new AbortController();
      const pending = call("fx__sleep_then_answer", { ms: 30_000 }, { signal: controller.signal });
      setTimeout(() => controller.abort("the user pressed stop"), 300);
      await expect(pending).rejects.toThrow();
      const cancelled = await eventually(
        async () => JSON.parse(textOf(await call("fx__cancelled_calls", {}))) as string[],
        (list) => list.length > 0,
        5_000,
      );
      expect(cancelled).toEqual([expect.stringMatching(/^sleep_then_answer:\d+$/)]);
    });
  }
});

describe("progress read in one chunk with its result", () => {
  // The upstream writes its notices and its result in one write: the proxy's client reads them
  // in one chunk, where the SDK settled the result before it handled the notices before it.
  const burst = async (client: { callTool: V1Client["callTool"] }, isModern: boolean) => {
    const seen: number[] = [];
    const params = { name: "call_tool", arguments: { name: "fx__burst_progress", arguments: { steps: 3 } } };
    const options = { onprogress: (update: { progress: number }) => seen.push(update.progress) };
    const result = isModern
      ? await (client as unknown as Client).callTool(params, options)
      : await client.callTool(params, undefined, options);
    expect(textOf(result)).toBe("burst");
    return seen;
  };

  // Over HTTP only: a client reads each event of its stream on its own turn, so what it sees is
  // what the proxy sent. Over stdio a client built on the SDK has the same flaw as the proxy's
  // client had, which the proxy can only make unlikely (stdio-transport.ts, PROGRESS_GAP_MS).
  test("every notice reaches a 2026-07-28 client before the result (HTTP)", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox, ["--burst-progress"]);
    const client = await pinnedClient(sandbox, "http");
    for (let round = 0; round < 5; round++) {
      expect(await burst(client as unknown as { callTool: V1Client["callTool"] }, true)).toEqual([1, 2, 3]);
    }
  });

  test("every notice reaches a 2025 client before the result (HTTP session)", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox, ["--burst-progress"]);
    const proxy = await httpProxy(sandbox);
    const legacy = new V1Client({ name: "legacy", version: "1" });
    await legacy.connect(new V1StreamableHTTPClientTransport(proxy.url));
    scope.defer(() => legacy.close());
    for (let round = 0; round < 5; round++) expect(await burst(legacy, false)).toEqual([1, 2, 3]);
  });
});

describe("what an upstream asks during a modern client's call", () => {
  async function relayFixtureOverHttp() {
    const fixture = await startHttpFixture("fx", ["--relay-tools"]);
    scope.defer(fixture.stop);
    return fixture.url;
  }

  for (const upstream of ["stdio", "http"] as const) {
    test(`never reaches a 2025 session calling the same ${upstream} server at the same time`, async () => {
      const sandbox = scope.sandbox();
      sandbox.writeConfig({
        mcpServers: {
          fx:
            upstream === "stdio"
              ? fixtureEntry({ args: ["--relay-tools"] })
              : { url: await relayFixtureOverHttp() },
        },
      });
      const proxy = await httpProxy(sandbox);
      // The 2025 session has a model, and records every request it is asked to answer.
      const seen: string[] = [];
      const legacy = new V1Client({ name: "legacy-B", version: "1" }, { capabilities: { sampling: {} } });
      legacy.setRequestHandler(CreateMessageRequestSchema, async (request) => {
        const first = request.params.messages[0]?.content;
        seen.push(first && "text" in first ? String(first.text) : "");
        return { model: "B", role: "assistant", content: { type: "text", text: "B answered" } };
      });
      await legacy.connect(new V1StreamableHTTPClientTransport(proxy.url));
      scope.defer(() => legacy.close());
      const modern = await httpClient(proxy.url, "pinned");
      const ask = (client: { callTool: V1Client["callTool"] }, prompt: string) =>
        client.callTool({
          name: "call_tool",
          arguments: { name: "fx__ask_model", arguments: { prompt, together: 2 } },
        });
      const [fromModern] = await Promise.all([
        ask(modern as unknown as { callTool: V1Client["callTool"] }, "private notes of A"),
        ask(legacy, "notes of B"),
      ]);
      expect(seen.join(" ")).not.toContain("of A");
      expect(textOf(fromModern)).not.toContain("B answered");
      expect(fromModern.isError).toBe(true);
      if (upstream === "http") {
        // The request came on the modern call's own stream: it is that client's to answer by an
        // input round (e2e-mrtr.test.ts), and this one cannot sample; B's own still reached B.
        expect(textOf(fromModern)).toContain("does not support sampling");
        expect(seen).toEqual(["notes of B"]);
      } else {
        // Nothing says whose call it is: with two clients' calls in flight, neither gets it.
        expect(textOf(fromModern)).toContain("refuses it");
        expect(seen).toEqual([]);
      }
    });
  }
});

describe("a content block no revision defines, from a 2025 upstream", () => {
  // The proxy's own server checks each result it sends as strictly as the SDK checks a 2026
  // server's: what a 2025 server sends is made passable the same way (lenient-results.ts).
  const ODD_AS_TEXT = [
    {
      type: "text",
      text: '[a content block of type "hologram" that MCP does not define, passed on as text: {"type":"hologram","frames":3}]',
    },
    { type: "text", text: '[a malformed content block of type "text", passed on as text: {"type":"text"}]' },
    { type: "text", text: "odd content" },
  ];
  const callOdd = (client: { callTool: V1Client["callTool"] }) =>
    client.callTool({ name: "call_tool", arguments: { name: "fx__odd_content", arguments: {} } });

  test("reaches a 2025 client as text, and the call succeeds", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox, ["--odd-content"]);
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    const result = await callOdd(proxy.client);
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual(ODD_AS_TEXT);
  });

  for (const kind of ["stdio", "http"] as const) {
    test(`reaches a 2026-07-28 client as text, and the call succeeds (${kind})`, async () => {
      const sandbox = scope.sandbox();
      withFixture(sandbox, ["--odd-content"]);
      const client = await pinnedClient(sandbox, kind);
      const result = await callOdd(client as unknown as { callTool: V1Client["callTool"] });
      expect(result.isError).toBeFalsy();
      expect(result.content).toEqual(ODD_AS_TEXT);
    });
  }

  test("passthrough: the tool under its own name, its odd block as text", async () => {
    const sandbox = scope.sandbox();
    withFixture(sandbox, ["--odd-content"]);
    const proxy = await connectStdio(sandbox, {}, ["--passthrough", "fx"]);
    scope.defer(() => proxy.close());
    const result = await proxy.client.callTool({ name: "odd_content", arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual(ODD_AS_TEXT);
  });
});

describe("a modern client's log level (issue 22 item 7: `_meta` logLevel, no logging/setLevel)", () => {
  for (const kind of ["stdio", "http"] as const) {
    test(`goes on to a 2026 upstream, whose log messages come back at or above it; none without one (${kind})`, async () => {
      const sandbox = scope.sandbox();
      sandbox.writeConfig({ mcpServers: { logs: modernEntry({ args: ["--modern-only", "--log-tools"] }) } });
      const client = await pinnedClient(sandbox, kind);
      const messages: unknown[] = [];
      client.setNotificationHandler("notifications/message", (notification) => {
        messages.push(notification.params);
      });
      const call = (meta?: Record<string, unknown>) =>
        client.callTool({
          name: "call_tool",
          arguments: { name: "logs__log_levels", arguments: {} },
          ...(meta ? { _meta: meta } : {}),
        });
      // The upstream sends all four levels whatever it was told: the proxy filters by the request's.
      expect(textOf(await call({ "io.modelcontextprotocol/logLevel": "warning" }))).toBe('"warning"');
      expect(messages).toEqual([
        { level: "warning", logger: "logs", data: "a warning message" },
        { level: "error", logger: "logs", data: "a error message" },
      ]);
      messages.length = 0;
      expect(textOf(await call())).toBe("null");
      // A second call after it, so a message that was relayed late would have arrived by now.
      expect(textOf(await call({ "io.modelcontextprotocol/logLevel": "emergency" }))).toBe('"emergency"');
      expect(messages).toEqual([]);
    });
  }
});

describe("a 2025 session's log level to a 2026 upstream (issue 22 item 7: it has no session to remember one)", () => {
  /** A v1 client's session with the messages it hears, and a call of log_levels that answers the level the upstream was told. */
  const legacySession = (client: V1Client) => {
    const messages: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      messages.push(notification.params);
    });
    const call = async () =>
      textOf(
        await client.callTool({ name: "call_tool", arguments: { name: "logs__log_levels", arguments: {} } }),
      );
    return { messages, call };
  };
  const ALL_FOUR = ["debug", "info", "warning", "error"].map((level) => ({
    level,
    logger: "logs",
    data: `a ${level} message`,
  }));

  test("over stdio: the session's setLevel goes with each call, and its messages come back at or above it", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { logs: modernEntry({ args: ["--modern-only", "--log-tools"] }) } });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    const { messages, call } = legacySession(proxy.client);
    // Never set: everything, as from a 2025 server (the upstream is told debug).
    expect(await call()).toBe('"debug"');
    expect(messages).toEqual(ALL_FOUR);
    messages.length = 0;
    await proxy.client.setLoggingLevel("warning");
    expect(await call()).toBe('"warning"');
    expect(messages).toEqual(ALL_FOUR.slice(2));
    messages.length = 0;
    await proxy.client.setLoggingLevel("emergency");
    expect(await call()).toBe('"emergency"');
    // A call after it, so a message relayed late would have arrived by now.
    expect(await call()).toBe('"emergency"');
    expect(messages).toEqual([]);
  });

  test("over HTTP each session's own level goes with its calls, not another session's", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { logs: modernEntry({ args: ["--modern-only", "--log-tools"] }) } });
    const proxy = await httpProxy(sandbox);
    const sessions = [];
    for (const name of ["quiet", "default"]) {
      const client = new V1Client({ name, version: "1" });
      await client.connect(new V1StreamableHTTPClientTransport(proxy.url));
      scope.defer(() => client.close());
      sessions.push({ client, ...legacySession(client) });
    }
    const [quiet, plain] = sessions as [(typeof sessions)[number], (typeof sessions)[number]];
    await quiet.client.setLoggingLevel("error");
    expect(await quiet.call()).toBe('"error"');
    expect(await plain.call()).toBe('"debug"');
    expect(quiet.messages).toEqual(ALL_FOUR.slice(3));
    expect(plain.messages).toEqual(ALL_FOUR);
  });
});
