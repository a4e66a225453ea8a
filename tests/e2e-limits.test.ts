import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  connectStdio,
  createSandbox,
  fixtureEntry,
  processesMatching,
  requireBinary,
  type Sandbox,
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

const initialize = (id: number) =>
  `${JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  })}\n`;

describe("bad input on stdio", () => {
  let sandbox: Sandbox;
  let raw: Awaited<ReturnType<typeof startRawStdio>>;

  beforeAll(async () => {
    sandbox = createSandbox();
    sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() } });
    raw = await startRawStdio(sandbox, { MCPPROXY_MAX_MESSAGE_BYTES: String(1024 * 1024) });
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

  test("a request over maxMessageBytes is refused with -32600 naming the limit, unread, and the proxy stays up", async () => {
    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: 10,
      method: "tools/call",
      params: { name: "retrieve_tools", arguments: { query: "x".repeat(3 * 1024 * 1024) } },
    });
    raw.send(`${big}\n`);
    const reply = await raw.next();
    expect(reply).toMatchObject({ id: 10, error: { code: -32600 } });
    expect(reply.error?.message).toContain("MCPPROXY_MAX_MESSAGE_BYTES");
    raw.send(`${JSON.stringify({ jsonrpc: "2.0", id: 11, method: "ping" })}\n`);
    expect(await raw.next()).toEqual({ jsonrpc: "2.0", id: 11, result: {} });
    expect(raw.child.exitCode).toBeNull();
  });
});

describe("oversized results from an upstream", () => {
  test("a result over maxMessageBytes is an error that names the limit; the server is not restarted", async () => {
    const sandbox = createSandbox();
    const token = `big-${crypto.randomUUID()}`;
    sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry({ args: ["--name", token] }) } });
    const proxy = await connectStdio(sandbox, { MCPPROXY_MAX_MESSAGE_BYTES: String(2 * 1024 * 1024) });
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
      expect((big.content as { text: string }[])[0]!.text).toContain("MCPPROXY_MAX_MESSAGE_BYTES");

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
