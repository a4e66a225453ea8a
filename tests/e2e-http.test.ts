import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  connectHttp,
  connectStdio,
  createSandbox,
  eventually,
  everythingEntry,
  FIXTURE_TOOLS,
  fixtureEntry,
  initializeRequest,
  OWN_TOOLS_SORTED,
  retrieve,
  runCli,
  type Sandbox,
  startEverythingHttp,
  startHttpFixture,
  startHttpProxy,
} from "./helpers.ts";

setDefaultTimeout(30_000);

/** Sends one raw HTTP request, so the Host header is exactly what the test says. */
function rawRequest(port: number, lines: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(`${lines.join("\r\n")}\r\n\r\n`));
    let data = "";
    socket.on("data", (chunk) => {
      data += chunk.toString();
    });
    socket.on("end", () => resolve(data));
    socket.on("error", reject);
    socket.setTimeout(5000, () => {
      socket.destroy();
      resolve(data);
    });
  });
}

describe("mcpproxy serve over streamable HTTP", () => {
  let sandbox: Sandbox;
  let web: Awaited<ReturnType<typeof startHttpFixture>>;
  let proxy: Awaited<ReturnType<typeof startHttpProxy>>;
  let client: Client;

  beforeAll(async () => {
    sandbox = createSandbox();
    web = await startHttpFixture("web");
    sandbox.writeConfig({ mcpServers: { web: { url: web.url }, everything: everythingEntry() } });
    proxy = await startHttpProxy(sandbox);
    client = await connectHttp(proxy.url);
  });
  afterAll(async () => {
    await client?.close();
    await proxy?.stop();
    web?.stop();
    sandbox?.cleanup();
  });

  test("binds 127.0.0.1 by default and serves MCP at /mcp", () => {
    expect(proxy.url.hostname).toBe("127.0.0.1");
    expect(proxy.url.pathname).toBe("/mcp");
  });

  test("searches and calls tools on an HTTP upstream and a stdio upstream", async () => {
    const found = await retrieve(client, "echo back the message");
    const names = found.tools.map((tool) => tool.name);
    expect(names).toContain("web__echo");
    expect(names).toContain("everything__echo");
    const echoed = await client.callTool({
      name: "call_tool",
      arguments: { name: "web__echo", arguments: { message: "over http" } },
    });
    expect(echoed.content).toEqual([{ type: "text", text: "web echo: over http" }]);
    const structured = await client.callTool({
      name: "call_tool",
      arguments: { name: "web__add_numbers", arguments: { a: 20, b: 22 } },
    });
    expect(structured.structuredContent).toEqual({ sum: 42 });
    const everything = await client.callTool({
      name: "call_tool",
      arguments: { name: "everything__echo", arguments: { message: "hi" } },
    });
    expect(JSON.stringify(everything.content)).toContain("hi");
  });

  test("keeps separate sessions for separate clients", async () => {
    const second = await connectHttp(proxy.url);
    try {
      const { tools } = await second.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(OWN_TOOLS_SORTED);
    } finally {
      await second.close();
    }
  });

  test("serves old clients over the legacy SSE transport at /sse on the same listener", async () => {
    const legacy = new Client({ name: "legacy-client", version: "1.0.0" });
    await legacy.connect(new SSEClientTransport(new URL("/sse", proxy.url)));
    try {
      const { tools } = await legacy.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(OWN_TOOLS_SORTED);
      const echoed = await legacy.callTool({
        name: "call_tool",
        arguments: { name: "web__echo", arguments: { message: "over legacy sse" } },
      });
      expect(echoed.content).toEqual([{ type: "text", text: "web echo: over legacy sse" }]);
    } finally {
      await legacy.close();
    }
    const stale = await fetch(new URL("/messages?sessionId=nope", proxy.url), { method: "POST", body: "{}" });
    expect(stale.status).toBe(404);
  });

  test("/health reports the servers and the tool count", async () => {
    const response = await fetch(new URL("/health", proxy.url));
    expect(response.status).toBe(200);
    const health = (await response.json()) as {
      status: string;
      tools: number;
      servers: { name: string; state: string }[];
    };
    expect(health.status).toBe("ok");
    expect(health.tools).toBeGreaterThanOrEqual(FIXTURE_TOOLS + 13);
    expect(health.servers.map((s) => [s.name, s.state])).toEqual([
      ["everything", "connected"],
      ["web", "connected"],
    ]);
  });

  test("/health is degraded (200) while some servers are down, and 503 when none is usable", async () => {
    const local = createSandbox();
    try {
      const flaky = await startHttpFixture("flaky");
      local.writeConfig({
        mcpServers: {
          flaky: { url: flaky.url },
          missing: { command: "mcpproxy-no-such-command-anywhere" },
          paused: { command: "x", enabled: false },
        },
      });
      const proxy = await startHttpProxy(local);
      try {
        type Health = { status: string; servers: { name: string; state: string; error?: string }[] };
        const read = async () => {
          const response = await fetch(new URL("/health", proxy.url));
          return { code: response.status, health: (await response.json()) as Health };
        };
        const degraded = await eventually(
          read,
          ({ health }) => health.servers.every((s) => s.state !== "connecting"),
          15_000,
        );
        expect(degraded.code).toBe(200);
        expect(degraded.health.status).toBe("degraded");
        const byName = Object.fromEntries(degraded.health.servers.map((s) => [s.name, s]));
        expect(byName.flaky?.state).toBe("connected");
        expect(byName.missing).toMatchObject({
          state: "failed",
          error: expect.stringContaining("command not found"),
        });
        expect(byName.paused?.state).toBe("disabled");

        flaky.stop();
        await flaky.child.exited;
        // The proxy learns a remote server is gone when it next talks to it.
        const client = await connectHttp(proxy.url);
        await client.callTool({
          name: "call_tool",
          arguments: { name: "flaky__echo", arguments: { message: "x" } },
        });
        await client.close();
        const down = await read();
        expect(down.code).toBe(503);
        expect(down.health.status).toBe("degraded");
        expect(down.health.servers.find((s) => s.name === "flaky")?.state).toMatch(/failed|restarting/);
      } finally {
        await proxy.stop();
      }
    } finally {
      local.cleanup();
    }
  });

  test("bad requests get the documented status, and the session's next good request is answered", async () => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const init = JSON.stringify(initializeRequest());
    const opened = await fetch(proxy.url, { method: "POST", headers, body: init });
    const session = opened.headers.get("mcp-session-id")!;
    await opened.body?.cancel();
    const post = (body: string, extra: Record<string, string> = {}) =>
      fetch(proxy.url, {
        method: "POST",
        headers: { ...headers, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18", ...extra },
        body,
      });
    const cases: [string, Promise<Response>, number][] = [
      [
        "an Accept without event streams",
        post('{"jsonrpc":"2.0","id":2,"method":"ping"}', { accept: "text/html" }),
        406,
      ],
      [
        "a Content-Type that is not JSON",
        post('{"jsonrpc":"2.0","id":3,"method":"ping"}', { "content-type": "text/plain" }),
        415,
      ],
      [
        "an unsupported protocol version",
        post('{"jsonrpc":"2.0","id":4,"method":"ping"}', { "mcp-protocol-version": "1999-01-01" }),
        400,
      ],
      ["a body that is not JSON", post("{nope"), 400],
      ["a message that is not JSON-RPC 2.0", post('{"jsonrpc":"1.0","id":5,"method":"ping"}'), 400],
      [
        "an unknown session",
        post('{"jsonrpc":"2.0","id":6,"method":"ping"}', { "mcp-session-id": "no-such-session" }),
        404,
      ],
    ];
    for (const [what, response, status] of cases) {
      const answer = await response;
      expect(`${what}: ${answer.status}`).toBe(`${what}: ${status}`);
      await answer.body?.cancel();
    }
    const good = await post('{"jsonrpc":"2.0","id":7,"method":"ping"}');
    expect(good.status).toBe(200);
    expect(await good.text()).toContain('"id":7');
  });

  test("never forwards the Authorization header a client sends to the proxy", async () => {
    const secretive = new Client({ name: "secretive", version: "1" });
    await secretive.connect(
      new StreamableHTTPClientTransport(proxy.url, {
        requestInit: { headers: { Authorization: "Bearer client-secret-for-the-proxy" } },
      }),
    );
    try {
      const result = await secretive.callTool({
        name: "call_tool",
        arguments: { name: "web__show_request_headers", arguments: {} },
      });
      const headers = JSON.parse((result.content as { text: string }[])[0]!.text) as Record<string, string>;
      expect(headers["content-type"]).toContain("application/json");
      expect(JSON.stringify(headers)).not.toContain("client-secret-for-the-proxy");
      expect(Object.keys(headers).map((key) => key.toLowerCase())).not.toContain("authorization");
    } finally {
      await secretive.close();
    }
  });

  test("rejects a foreign Origin and a foreign Host with 403 (DNS rebinding)", async () => {
    const port = Number(proxy.url.port);
    const foreignOrigin = await fetch(proxy.url, {
      method: "POST",
      headers: {
        origin: "http://evil.example",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(foreignOrigin.status).toBe(403);
    // Each refusal says which setting would allow another name.
    expect(((await foreignOrigin.json()) as { error: string }).error).toContain("--host");
    const foreignHost = await rawRequest(port, [
      "GET /health HTTP/1.1",
      "Host: evil.example",
      "Connection: close",
    ]);
    expect(foreignHost).toMatch(/^HTTP\/1\.1 403/);
    expect(foreignHost).toContain("Host evil.example is not allowed");
    expect(foreignHost).toContain("mcpproxy serve --host ADDRESS");
    expect(foreignHost).toContain("MCPPROXY_HOST");
    const goodHost = await rawRequest(port, [
      "GET /health HTTP/1.1",
      `Host: localhost:${port}`,
      "Connection: close",
    ]);
    expect(goodHost).toMatch(/^HTTP\/1\.1 200/);
  });

  test("answers a CORS preflight from a local web client and exposes the session header", async () => {
    const preflight = await fetch(proxy.url, {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:6274",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, mcp-session-id",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("http://localhost:6274");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("mcp-session-id");
    const foreign = await fetch(proxy.url, {
      method: "OPTIONS",
      headers: { origin: "http://evil.example", "access-control-request-method": "POST" },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
    // The request itself: a local web client's is answered for its origin, the session header
    // exposed; one without an Origin (any other client) gets no CORS headers, and Vary says why.
    const initialize = (origin?: string) =>
      fetch(proxy.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(origin ? { origin } : {}),
        },
        body: JSON.stringify(initializeRequest(1, "cors")),
      });
    const fromPage = await initialize("http://localhost:6274");
    await fromPage.text();
    expect(fromPage.headers.get("access-control-allow-origin")).toBe("http://localhost:6274");
    expect(fromPage.headers.get("access-control-expose-headers")).toContain("mcp-session-id");
    expect(fromPage.headers.get("vary")).toContain("Origin");
    const fromTool = await initialize();
    await fromTool.text();
    expect(fromTool.headers.get("mcp-session-id")).not.toBeNull();
    expect(fromTool.headers.get("access-control-allow-origin")).toBeNull();
    expect(fromTool.headers.get("vary")).toContain("Origin");
  });

  test("answers requests without a session, or with an unknown one, with a JSON-RPC error", async () => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const noSession = await fetch(proxy.url, { method: "POST", headers, body });
    expect(noSession.status).toBe(400);
    expect(((await noSession.json()) as { error: { message: string } }).error.message).toContain(
      "initialize",
    );
    const unknown = await fetch(proxy.url, {
      method: "POST",
      headers: { ...headers, "mcp-session-id": "nope" },
      body,
    });
    expect(unknown.status).toBe(404);
  });
});

describe("the HTTP listener's life cycle", () => {
  test("a busy port is a clear error with exit 1; SIGTERM stops the proxy with exit 0", async () => {
    const sandbox = createSandbox();
    try {
      sandbox.writeConfig({ mcpServers: {} });
      const first = await startHttpProxy(sandbox);
      const second = await runCli(
        [
          "serve",
          "--transport",
          "http",
          "--port",
          first.url.port,
          "--config",
          sandbox.configPath,
          "--data-dir",
          sandbox.dataDir,
        ],
        sandbox.env(),
      );
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`Cannot listen on 127.0.0.1:${first.url.port}`);
      expect(await first.stop()).toBe(0);
      expect(first.stderr.text()).toContain("shutting down (SIGTERM)");
    } finally {
      sandbox.cleanup();
    }
  });
});

describe("an upstream on the legacy SSE transport", () => {
  test("is indexed and called through the proxy (server-everything in sse mode)", async () => {
    const sandbox = createSandbox();
    const sse = await startEverythingHttp("sse");
    try {
      sandbox.writeConfig({ mcpServers: { legacy: { url: sse.url } } });
      const proxy = await connectStdio(sandbox);
      try {
        const found = await retrieve(proxy.client, "echo the input message");
        expect(found.tools[0]).toMatchObject({ name: "legacy__echo", server: "legacy", tool: "echo" });
        const echoed = await proxy.client.callTool({
          name: "call_tool",
          arguments: { name: "legacy__echo", arguments: { message: "via sse" } },
        });
        expect(JSON.stringify(echoed.content)).toContain("via sse");
      } finally {
        await proxy.close();
      }
    } finally {
      sse.stop();
      sandbox.cleanup();
    }
  });
});

describe("the bearer token", () => {
  test("is required when asked for and when bound beyond loopback; it lives in a 0600 file", async () => {
    for (const [extraArgs, env] of [
      [[], { MCPPROXY_REQUIRE_TOKEN: "1" }],
      [["--host", "0.0.0.0"], {}],
    ] as const) {
      const sandbox = createSandbox();
      sandbox.writeConfig({ mcpServers: {} });
      const proxy = await startHttpProxy(sandbox, [...extraArgs], env);
      try {
        const url = new URL(`http://127.0.0.1:${proxy.url.port}/mcp`);
        const init = (authorization?: string) =>
          fetch(url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              ...(authorization ? { authorization } : {}),
            },
            body: JSON.stringify(initializeRequest()),
          });
        const none = await init();
        expect(none.status).toBe(401);
        expect(none.headers.get("www-authenticate")).toBe('Bearer realm="mcpproxy"');
        expect((await init("Bearer not-the-token")).status).toBe(401);
        const tokenFile = join(sandbox.dataDir, "http-token");
        expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
        const token = readFileSync(tokenFile, "utf8").trim();
        expect(token).toMatch(/^[0-9a-f]{64}$/);
        const ok = await init(`Bearer ${token}`);
        expect(ok.status).toBe(200);
        await ok.body?.cancel();
        expect((await fetch(new URL("/health", url))).status).toBe(401);
      } finally {
        await proxy.stop();
        sandbox.cleanup();
      }
    }
  });

  test("takes the scheme in any case, as RFC 9110 says, and still refuses a wrong token", async () => {
    const sandbox = createSandbox();
    sandbox.writeConfig({ mcpServers: {} });
    const proxy = await startHttpProxy(sandbox, [], { MCPPROXY_REQUIRE_TOKEN: "1" });
    try {
      const token = readFileSync(join(sandbox.dataDir, "http-token"), "utf8").trim();
      // /health answers 503 while no server is connected: what matters here is 401 or not.
      const refused = async (authorization: string) => {
        const response = await fetch(new URL("/health", proxy.url), { headers: { authorization } });
        await response.body?.cancel();
        return response.status === 401;
      };
      const wrong = token.replace(/.$/, (c) => (c === "0" ? "1" : "0"));
      for (const scheme of ["bearer", "BEARER", "bEaReR"]) {
        expect(await refused(`${scheme} ${token}`)).toBe(false);
        expect(await refused(`${scheme} ${wrong}`)).toBe(true);
      }
      expect(await refused(`Bearer  ${token}`)).toBe(false);
      expect(await refused(`Basic ${token}`)).toBe(true);
      expect(await refused(`Bearer${token}`)).toBe(true);
    } finally {
      await proxy.stop();
      sandbox.cleanup();
    }
  });
});

describe("an HTTP listener that cannot start", () => {
  test("a busy port or a wrong --host is said first, with its own remedy, before any server starts", async () => {
    const sandbox = createSandbox();
    const blocker = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("taken") });
    try {
      const starts = join(sandbox.dir, "starts.log");
      sandbox.writeConfig({
        mcpServers: {
          a: fixtureEntry({ env: { FIXTURE_START_LOG: starts } }),
          b: fixtureEntry({ args: ["--name", "b"], env: { FIXTURE_START_LOG: starts } }),
        },
      });
      const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir, "--transport", "http"];
      const busy = await runCli(["serve", ...flags, "--port", String(blocker.port)], sandbox.env());
      expect(busy.code).toBe(1);
      expect(busy.stderr).toStartWith(
        `mcpproxy: Cannot listen on 127.0.0.1:${blocker.port}: port ${blocker.port} is in use`,
      );
      expect(busy.stderr).toContain("pick another --port (0 picks a free one)");
      // 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this machine.
      const host = await runCli(["serve", ...flags, "--host", "192.0.2.1", "--port", "0"], sandbox.env());
      expect(host.code).toBe(1);
      expect(host.stderr).toStartWith(
        "mcpproxy: Cannot listen on 192.0.2.1:0: 192.0.2.1 is not an address of this machine",
      );
      expect(host.stderr).not.toContain("--port");
      for (const result of [busy, host]) {
        expect(result.stderr).not.toContain("could not connect");
        expect(result.stderr).not.toContain("shutting down");
        expect(result.stderr.trim().split("\n")).toHaveLength(1);
      }
      expect(existsSync(starts)).toBe(false);
    } finally {
      await blocker.stop(true);
      sandbox.cleanup();
    }
  });
});
