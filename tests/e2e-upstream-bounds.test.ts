import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  cleanupAfterEach,
  connectStdio,
  eventually,
  FIXTURE,
  fixtureEntry,
  httpProxyWithClient,
  watchOutput,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * What a remote server sends is bounded as a stdio server's lines are: one message by
 * maxResultBytes, a whole tool list (all pages) by maxToolListBytes and maxTools. Over streamable
 * HTTP (SSE and JSON answers) and the legacy SSE transport, through the compiled binary; a server
 * over a bound fails alone, and the proxy and the other servers go on.
 */

const scope = cleanupAfterEach();
const MiB = 1024 * 1024;
const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content ?? []).map((block) => block.text ?? "").join("");
const call = (client: Client, name: string, args: object) =>
  client.callTool({ name: "call_tool", arguments: { name, arguments: args } });

const TRANSPORTS = [
  { label: "streamable HTTP answering with SSE", flags: ["--http", "0"], path: "/mcp" },
  { label: "streamable HTTP answering with JSON", flags: ["--http", "0", "--json-response"], path: "/mcp" },
  { label: "legacy HTTP+SSE", flags: ["--sse", "0"], path: "/sse" },
] as const;
type Transport = (typeof TRANSPORTS)[number];

/** The fixture server over one of the HTTP transports; resolves to its URL. */
async function startRemote(transport: Transport, args: string[] = []): Promise<string> {
  const child = Bun.spawn([process.execPath, FIXTURE, ...transport.flags, "--storm-tools", ...args], {
    stdout: "pipe",
    stderr: "inherit",
  });
  scope.defer(() => child.kill());
  const port = await watchOutput(child.stdout).waitFor(/\{"port":(\d+)\}/, 10_000);
  return `http://127.0.0.1:${port}${transport.path}`;
}

async function proxyWith(servers: Record<string, unknown>, env: Record<string, string> = {}) {
  const { proxy, client, health } = await httpProxyWithClient(scope, servers, env);
  const settled = () =>
    eventually(
      health,
      (report) => report.servers.every((server) => server.state === "connected" || server.state === "failed"),
      30_000,
    );
  return { proxy, client, health, settled };
}

for (const transport of TRANSPORTS) {
  describe(`a remote server over ${transport.label}`, () => {
    test("a result over maxResultBytes is an error naming the limit, and the server keeps serving", async () => {
      const url = await startRemote(transport);
      const { client, proxy, settled } = await proxyWith(
        { remote: { url } },
        // Spilling off: the 200,000-byte result under the bound must come whole.
        { MCPPROXY_MAX_RESULT_BYTES: String(MiB), MCPPROXY_RESULT_SPILL_BYTES: "0" },
      );
      await settled();
      const big = await call(client, "remote__big_result", { bytes: 3 * MiB });
      expect(big.isError).toBe(true);
      expect(textOf(big)).toContain(`over the limit of ${MiB} bytes`);
      expect(textOf(big)).toContain("MCPPROXY_MAX_RESULT_BYTES");
      // Under the limit still passes whole, on the same connection.
      expect(textOf(await call(client, "remote__big_result", { bytes: 200_000 }))).toHaveLength(200_000);
      expect(textOf(await call(client, "remote__echo", { message: "after" }))).toBe("fixture echo: after");
      expect(proxy.child.exitCode).toBeNull();
    });

    test("a tool list in one message over maxResultBytes fails that server alone", async () => {
      const url = await startRemote(transport, ["--many-tools", "300", "--description-bytes", "10000"]);
      const { client, health, settled } = await proxyWith(
        { huge: { url }, local: fixtureEntry() },
        { MCPPROXY_MAX_RESULT_BYTES: String(MiB) },
      );
      const report = await settled();
      const huge = report.servers.find((server) => server.name === "huge")!;
      expect(huge.state).toBe("failed");
      expect(huge.error).toContain("MCPPROXY_MAX_RESULT_BYTES");
      expect(report.servers.find((server) => server.name === "local")!.state).toBe("connected");
      expect(textOf(await call(client, "local__echo", { message: "still here" }))).toBe(
        "fixture echo: still here",
      );
      expect((await health()).servers.find((server) => server.name === "local")!.state).toBe("connected");
    });

    test("many pages are bounded in total, by bytes (maxToolListBytes) and by count (maxTools), per server", async () => {
      const paged = ["--many-tools", "400", "--description-bytes", "5000", "--page-size", "20"];
      const [byBytes, byCount, fits] = await Promise.all([
        startRemote(transport, paged),
        startRemote(transport, paged),
        startRemote(transport, ["--many-tools", "100", "--page-size", "20"]),
      ]);
      const { client, settled } = await proxyWith({
        byBytes: { url: byBytes, maxToolListBytes: MiB },
        byCount: { url: byCount, maxTools: 50 },
        fits: { url: fits, maxTools: 200 },
      });
      const report = await settled();
      const state = (name: string) => report.servers.find((server) => server.name === name)!;
      expect(state("byBytes").state).toBe("failed");
      expect(state("byBytes").error).toContain(`larger than ${MiB} bytes`);
      expect(state("byBytes").error).toContain("maxToolListBytes");
      expect(state("byCount").state).toBe("failed");
      expect(state("byCount").error).toContain("more than 50 tools");
      expect(state("byCount").error).toContain("maxTools");
      expect(state("fits").state).toBe("connected");
      expect(state("fits").tools).toBeGreaterThan(100);
      expect(textOf(await call(client, "fits__echo", { message: "paged" }))).toBe("fixture echo: paged");
    });
  });
}

describe("the proxy-wide bounds", () => {
  test("MCPPROXY_MAX_TOOLS bounds every server, and a server's own maxTools wins", async () => {
    const url = await startRemote(TRANSPORTS[0], ["--many-tools", "60", "--page-size", "25"]);
    const { settled } = await proxyWith(
      { bounded: { url }, raised: { url, maxTools: 1_000 } },
      { MCPPROXY_MAX_TOOLS: "40" },
    );
    const report = await settled();
    expect(report.servers.find((server) => server.name === "bounded")!.error).toContain("more than 40 tools");
    expect(report.servers.find((server) => server.name === "raised")!.state).toBe("connected");
  });
});

describe("a result nested 100,000 levels deep", () => {
  const servers = async () => ({
    stdio: { ...fixtureEntry({ args: ["--storm-tools"] }), callTimeoutMs: 20_000 },
    sse: { url: await startRemote(TRANSPORTS[0]), callTimeoutMs: 20_000 },
    json: { url: await startRemote(TRANSPORTS[1]), callTimeoutMs: 20_000 },
  });

  test("is an error for that call at once, on stdio and over HTTP, and the servers go on", async () => {
    const { client } = await proxyWith(await servers());
    for (const server of ["stdio", "sse", "json"]) {
      const deep = await call(client, `${server}__deep_result`, { depth: 100_000 });
      expect(deep.isError).toBe(true);
      expect(textOf(deep)).toContain("nested more than 1000 levels deep");
      expect(textOf(await call(client, `${server}__echo`, { message: server }))).toBe(
        `fixture echo: ${server}`,
      );
    }
  });

  test("reaches a stdio client as an error too", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { stdio: (await servers()).stdio } });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    const deep = await call(proxy.client, "stdio__deep_result", { depth: 100_000 });
    expect(deep.isError).toBe(true);
    expect(textOf(deep)).toContain("nested more than 1000 levels deep");
  });
});
