import { afterAll, afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createSandbox, ROOT, runCli, type Sandbox, watchOutput } from "./helpers.ts";

setDefaultTimeout(30_000);

/**
 * Issue 22: MCP revision 2026-07-28. First the v2 fixture server is shown to be what it claims
 * (modern clients are served, a 2025 client is refused by `--modern-only`); then the proxy is
 * run against it.
 */
const MODERN_FIXTURE = join(ROOT, "tests", "fixtures", "modern-server.ts");
const MODERN_TOOLS = ["add", "echo"];

/** Starts tests/fixtures/modern-server.ts over HTTP on a free port. */
async function startModernHttp(args: string[] = []) {
  const child = Bun.spawn([process.execPath, MODERN_FIXTURE, "--http", "0", ...args], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const port = await watchOutput(child.stdout).waitFor(/\{"port":(\d+)\}/, 10_000);
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => child.kill() };
}

const stdioParams = (args: string[] = []) => ({
  command: process.execPath,
  args: [MODERN_FIXTURE, ...args],
  stderr: "ignore" as const,
});

/** A v2 client that speaks only 2026-07-28 (no fallback to the 2025 handshake). */
const pinnedClient = () =>
  new Client(
    { name: "modern-test", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );

function firstText(result: unknown): string | undefined {
  return (result as { content?: { type: string; text?: string }[] }).content?.[0]?.text;
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the modern-era fixture server", () => {
  for (const kind of ["stdio", "http"] as const) {
    test(`a v2 client pinned to 2026-07-28 lists and calls its tools over ${kind}`, async () => {
      const client = pinnedClient();
      if (kind === "stdio") {
        await client.connect(new StdioClientTransport(stdioParams(["--modern-only"])));
      } else {
        const http = await startModernHttp(["--modern-only"]);
        cleanups.push(http.stop);
        await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
      }
      cleanups.push(() => client.close());
      expect(client.getProtocolEra()).toBe("modern");
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(MODERN_TOOLS);
      const echoed = await client.callTool({ name: "echo", arguments: { message: "hi" } });
      expect(firstText(echoed)).toBe("modern echo: hi");
      expect(firstText(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } }))).toBe("5");
    });

    test(`--modern-only refuses a 2025-11-25 (v1 SDK) client over ${kind}`, async () => {
      const client = new V1Client({ name: "legacy-test", version: "1.0.0" });
      cleanups.push(() => client.close());
      let connecting: Promise<void>;
      if (kind === "stdio") {
        connecting = client.connect(new V1StdioClientTransport(stdioParams(["--modern-only"])));
      } else {
        const http = await startModernHttp(["--modern-only"]);
        cleanups.push(http.stop);
        connecting = client.connect(new V1StreamableHTTPClientTransport(new URL(http.url)));
      }
      // stdio: "MCP error -32022: Unsupported ..."; HTTP: a 400 whose JSON-RPC body has code -32022.
      await expect(connecting).rejects.toThrow(/-32022.*Unsupported protocol version: 2025-11-25/);
    });

    test(`without --modern-only a 2025-11-25 (v1 SDK) client is served over ${kind}`, async () => {
      const client = new V1Client({ name: "legacy-test", version: "1.0.0" });
      if (kind === "stdio") {
        await client.connect(new V1StdioClientTransport(stdioParams()));
      } else {
        const http = await startModernHttp();
        cleanups.push(http.stop);
        await client.connect(new V1StreamableHTTPClientTransport(new URL(http.url)));
      }
      cleanups.push(() => client.close());
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(MODERN_TOOLS);
      const echoed = await client.callTool({ name: "echo", arguments: { message: "old" } });
      expect(firstText(echoed)).toBe("modern echo: old");
    });
  }
});

describe("mcpproxy index with a 2026-07-28 upstream", () => {
  const sandboxes: Sandbox[] = [];
  afterAll(() => {
    for (const sandbox of sandboxes) sandbox.cleanup();
  });

  /** Indexes one upstream `modern` (stdio or HTTP) with the compiled binary. */
  async function indexModern(kind: "stdio" | "http", fixtureArgs: string[]) {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    let entry: Record<string, unknown>;
    if (kind === "stdio") {
      entry = { command: process.execPath, args: [MODERN_FIXTURE, ...fixtureArgs] };
    } else {
      const http = await startModernHttp(fixtureArgs);
      cleanups.push(http.stop);
      entry = { url: http.url };
    }
    sandbox.writeConfig({ mcpServers: { modern: entry } });
    return runCli(["index", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir], sandbox.env());
  }

  function expectIndexed(result: Awaited<ReturnType<typeof runCli>>) {
    if (result.code !== 0)
      console.error(`mcpproxy index: exit ${result.code}\n${result.stdout}${result.stderr}`);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("1 of 1 servers indexed");
    expect(result.stdout).toContain("2 tools (2 added, 0 updated, 0 removed, 0 unchanged)");
  }

  for (const kind of ["stdio", "http"] as const) {
    // The control: the same upstream, dual-era, is indexed today over the 2025 handshake.
    test(`indexes a dual-era upstream over ${kind}`, async () => {
      expectIndexed(await indexModern(kind, []));
    });

    test(`indexes a modern-only upstream over ${kind}`, async () => {
      expectIndexed(await indexModern(kind, ["--modern-only"]));
    });
  }
});
