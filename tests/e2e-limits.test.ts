import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { connect } from "node:net";
import {
  connectStdio,
  createSandbox,
  eventually,
  fixtureEntry,
  initializeRequest,
  processesMatching,
  requireBinary,
  type Sandbox,
  startHttpProxy,
  watchOutput,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/** Bad and oversized input, on stdio, through the compiled binary: answered, bounded, never fatal. */

interface RpcReply {
  jsonrpc: string;
  id: string | number | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** `mcpproxy serve` over stdio driven with raw lines, so the test controls every byte. */
async function startRawStdio(sandbox: Sandbox, env: Record<string, string> = {}) {
  const child = Bun.spawn(
    [requireBinary(), "serve", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
    { env: sandbox.env(env), stdin: "pipe", stdout: "pipe", stderr: "pipe" },
  );
  const stdout = watchOutput(child.stdout);
  watchOutput(child.stderr);
  let seen = 0;
  const replies = () =>
    stdout
      .text()
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as RpcReply);
  return {
    child,
    send(text: string) {
      child.stdin.write(text);
      child.stdin.flush();
    },
    /** The next reply not yet returned. */
    async next(): Promise<RpcReply> {
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const all = replies();
        if (all.length > seen) return all[seen++]!;
        await Bun.sleep(20);
      }
      throw new Error(`no reply; stdout so far: ${stdout.text().slice(0, 500)}`);
    },
  };
}

const initialize = (id: number) => `${JSON.stringify(initializeRequest(id))}\n`;

describe("bad input on stdio", () => {
  let sandbox: Sandbox;
  let raw: Awaited<ReturnType<typeof startRawStdio>>;

  beforeAll(async () => {
    sandbox = createSandbox();
    sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() } });
    raw = await startRawStdio(sandbox, { MCPPROXY_MAX_REQUEST_BYTES: String(1024 * 1024) });
    raw.send(initialize(1));
    expect((await raw.next()).id).toBe(1);
    raw.send(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  });
  afterAll(async () => {
    raw?.child.kill();
    await raw?.child.exited;
    sandbox?.cleanup();
  });

  test("a line that is not JSON gets -32700, a batch and a wrong jsonrpc get -32600, and the session goes on", async () => {
    raw.send("this is not json\n");
    expect(await raw.next()).toMatchObject({ id: null, error: { code: -32700 } });
    raw.send(`${JSON.stringify([{ jsonrpc: "2.0", id: 5, method: "ping" }])}\n`);
    expect(await raw.next()).toMatchObject({ id: null, error: { code: -32600 } });
    raw.send(`${JSON.stringify({ jsonrpc: "1.0", id: 6, method: "ping" })}\n`);
    expect(await raw.next()).toMatchObject({ id: 6, error: { code: -32600 } });
    raw.send(`${JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" })}\n`);
    expect(await raw.next()).toEqual({ jsonrpc: "2.0", id: 7, result: {} });
  });

  test("malformed params get -32602, not -32603", async () => {
    raw.send(
      `${JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "call_tool", arguments: [1, 2] } })}\n`,
    );
    const reply = await raw.next();
    expect(reply).toMatchObject({ id: 8, error: { code: -32602 } });
    expect(reply.error?.message).toContain("arguments");
    raw.send(`${JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: {} })}\n`);
    expect(await raw.next()).toMatchObject({ id: 9, error: { code: -32602 } });
  });

  test("a request over maxRequestBytes is refused with -32600 naming the limit, unread, and the proxy stays up", async () => {
    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: 10,
      method: "tools/call",
      params: { name: "retrieve_tools", arguments: { query: "x".repeat(3 * 1024 * 1024) } },
    });
    raw.send(`${big}\n`);
    const reply = await raw.next();
    expect(reply).toMatchObject({ id: 10, error: { code: -32600 } });
    expect(reply.error?.message).toContain("MCPPROXY_MAX_REQUEST_BYTES");
    raw.send(`${JSON.stringify({ jsonrpc: "2.0", id: 11, method: "ping" })}\n`);
    expect(await raw.next()).toEqual({ jsonrpc: "2.0", id: 11, result: {} });
    expect(raw.child.exitCode).toBeNull();
  });
});

describe("upstreams that flood", () => {
  test("a 50 MB result is refused under the default limit, and a server flooding stderr keeps answering", async () => {
    const sandbox = createSandbox();
    sandbox.writeConfig({
      mcpServers: { big: fixtureEntry(), noisy: fixtureEntry({ args: ["--mode", "stderr-flood"] }) },
    });
    const proxy = await connectStdio(sandbox);
    try {
      const big = await proxy.client.callTool({
        name: "call_tool",
        arguments: { name: "big__big_result", arguments: { bytes: 50 * 1024 * 1024 } },
      });
      expect(big.isError).toBe(true);
      expect(JSON.stringify(big.content)).toContain("over the limit of 20971520 bytes");
      for (let i = 0; i < 20; i++) {
        const echo = await proxy.client.callTool({
          name: "call_tool",
          arguments: { name: "noisy__echo", arguments: { message: `n${i}` } },
        });
        expect(echo.content).toEqual([{ type: "text", text: `fixture echo: n${i}` }]);
      }
    } finally {
      await proxy.close();
      sandbox.cleanup();
    }
  });
});

describe("oversized results from an upstream", () => {
  test("a result over maxResultBytes is an error that names the limit; the server is not restarted", async () => {
    const sandbox = createSandbox();
    const token = `big-${crypto.randomUUID()}`;
    sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry({ args: ["--name", token] }) } });
    // Spilling off: this is about the transport's bound, and the 1 MiB result must come whole.
    const proxy = await connectStdio(sandbox, {
      MCPPROXY_MAX_RESULT_BYTES: String(2 * 1024 * 1024),
      MCPPROXY_RESULT_SPILL_BYTES: "0",
    });
    try {
      const call = (args: Record<string, unknown>) =>
        proxy.client.callTool({
          name: "call_tool",
          arguments: { name: "fixture__big_result", arguments: args },
        });
      const small = await call({ bytes: 1024 * 1024 });
      expect((small.content as { text: string }[])[0]!.text).toHaveLength(1024 * 1024);
      const [pid] = processesMatching(token);

      const big = await call({ bytes: 12 * 1024 * 1024 });
      expect(big.isError).toBe(true);
      expect((big.content as { text: string }[])[0]!.text).toContain("over the limit of 2097152 bytes");
      expect((big.content as { text: string }[])[0]!.text).toContain("MCPPROXY_MAX_RESULT_BYTES");

      const echo = await proxy.client.callTool({
        name: "call_tool",
        arguments: { name: "fixture__echo", arguments: { message: "still here" } },
      });
      expect(echo.content).toEqual([{ type: "text", text: `${token} echo: still here` }]);
      expect(processesMatching(token)).toEqual([pid!]);
      expect(proxy.stderr()).not.toContain("disconnected");
    } finally {
      await proxy.close();
      sandbox.cleanup();
    }
  });
});

/** Writes raw bytes to the proxy's port and collects whatever comes back, never reading more than asked. */
function rawSocket(port: number) {
  let received = "";
  let isClosed = false;
  const socket = connect(port, "127.0.0.1");
  socket.on("data", (chunk) => {
    received += chunk.toString("latin1");
  });
  socket.on("close", () => {
    isClosed = true;
  });
  socket.on("error", () => {});
  return {
    socket,
    write: (text: string | Uint8Array) => socket.write(text),
    received: () => received,
    isClosed: () => isClosed,
    close: () => socket.destroy(),
  };
}

const initBody = JSON.stringify(initializeRequest());

describe("bounded HTTP", () => {
  let sandbox: Sandbox;
  let proxy: Awaited<ReturnType<typeof startHttpProxy>>;
  const port = () => Number(proxy.url.port);

  beforeAll(async () => {
    sandbox = createSandbox();
    sandbox.writeConfig({
      mcpServers: { fixture: fixtureEntry() },
      mcpproxy: {
        maxRequestBytes: 64 * 1024,
        maxResultBytes: 1024 * 1024,
        maxSessions: 4,
        sessionIdleMs: 2_000,
        bodyTimeoutMs: 1_000,
        // Whole results: a client that stops reading must be sent more than its stream may hold.
        resultSpillBytes: 0,
      },
    });
    proxy = await startHttpProxy(sandbox);
  });
  afterAll(async () => {
    await proxy?.stop();
    sandbox?.cleanup();
  });

  test("a body over maxRequestBytes gets 413 before the rest is read, by Content-Length or by the bytes that arrive", async () => {
    const declared = rawSocket(port());
    declared.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 104857600\r\n\r\n{"jsonrpc"`,
    );
    await eventually(declared.received, (text) => text.includes("\r\n\r\n"), 5_000);
    expect(declared.received()).toStartWith("HTTP/1.1 413");
    declared.close();
    const over = rawSocket(port());
    over.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{"jsonrpc"`,
    );
    await eventually(over.received, (text) => text.includes("MCPPROXY_MAX_REQUEST_BYTES"), 5_000);
    expect(over.received()).toStartWith("HTTP/1.1 413");
    over.close();

    // Chunked, no Content-Length: the bytes that arrive are counted.
    const chunked = rawSocket(port());
    chunked.write(
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
    );
    const piece = "x".repeat(16 * 1024);
    for (let i = 0; i < 8 && !chunked.received(); i++) {
      chunked.write(`${piece.length.toString(16)}\r\n${piece}\r\n`);
      await Bun.sleep(20);
    }
    await eventually(chunked.received, (text) => text.includes("\r\n\r\n"), 5_000);
    expect(chunked.received()).toStartWith("HTTP/1.1 413");
    chunked.close();
  });

  test("a body that trickles in is refused with 408 after bodyTimeoutMs", async () => {
    const slow = rawSocket(port());
    slow.write(
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{",
    );
    await eventually(slow.received, (text) => text.includes("\r\n\r\n"), 10_000);
    expect(slow.received()).toStartWith("HTTP/1.1 408");
    slow.close();
  });

  test("sessions are capped (503 with Retry-After) and idle ones expire", async () => {
    const open = async () =>
      fetch(proxy.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: initBody,
      });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await open();
      expect(response.status).toBe(200);
      ids.push(response.headers.get("mcp-session-id")!);
      await response.body?.cancel();
    }
    const refused = await open();
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      "MCPPROXY_MAX_SESSIONS",
    );

    // Nothing more happens on them: after sessionIdleMs they are closed and their slots free again.
    const health = async () =>
      ((await (await fetch(new URL("/health", proxy.url))).json()) as { sessions: { open: number } }).sessions
        .open;
    expect(await eventually(health, (n) => n === 0, 10_000)).toBe(0);
    const stale = await fetch(proxy.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": ids[0]!,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
    });
    expect(stale.status).toBe(404);
    expect((await open()).status).toBe(200);
  });

  test("a client that stops reading its SSE stream is cut off and its session freed, not buffered without end", async () => {
    const stream = rawSocket(port());
    stream.socket.setNoDelay(true);
    stream.write("GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");
    const endpoint = await eventually(
      () => /data: (\/messages\?sessionId=\S+)/.exec(stream.received())?.[1],
      (path) => path !== undefined,
      5_000,
    );
    stream.socket.pause(); // from now on, nothing is read
    const post = (body: object) =>
      fetch(new URL(endpoint!, proxy.url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    await post(JSON.parse(initBody));
    await post({ jsonrpc: "2.0", method: "notifications/initialized" });
    // Each answer is about 0.9 MB; the session may hold maxResultBytes + 1 MiB (2 MiB) for its client.
    let status = 202;
    for (let i = 0; i < 40 && status === 202; i++) {
      status = (
        await post({
          jsonrpc: "2.0",
          id: 10 + i,
          method: "tools/call",
          params: {
            name: "call_tool",
            arguments: { name: "fixture__big_result", arguments: { bytes: 900_000 } },
          },
        })
      ).status;
      await Bun.sleep(50);
    }
    expect(status).toBe(404);
    expect(proxy.stderr.text()).toContain("its client stopped reading");
    stream.close();
  });
});

describe("a search request longer than 4,096 characters", () => {
  test("is searched on its first 4,096 characters, and the answer says so", async () => {
    const sandbox = createSandbox();
    sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() } });
    const proxy = await connectStdio(sandbox);
    try {
      // A task prompt with pasted text: the request first, then a megabyte of something else.
      const query = `add two numbers and return the sum. ${"lorem ipsum dolor sit amet ".repeat(40_000)}`;
      const long = await proxy.client.callTool({ name: "retrieve_tools", arguments: { query } });
      expect(long.isError).toBeFalsy();
      const result = long.structuredContent as { query: string; tools: { name: string }[]; notes?: string[] };
      expect(result.tools[0]?.name).toBe("fixture__add_numbers");
      expect(result.query.length).toBeLessThanOrEqual(4096);
      expect(result.query).toStartWith("add two numbers and return the sum.");
      expect(result.notes).toEqual([
        `The query is ${query.trim().length} characters long; only its first 4096 were searched. ` +
          "Put what you want to do first, in a sentence or two.",
      ]);
      // A request that comes after the cut is not searched; the note tells the agent why.
      const late = await proxy.client.callTool({
        name: "retrieve_tools",
        arguments: { query: `${"lorem ipsum ".repeat(400)} add two numbers` },
      });
      expect((late.structuredContent as { notes?: string[] }).notes?.[0]).toContain("only its first 4096");
    } finally {
      await proxy.close();
      sandbox.cleanup();
    }
  });
});
