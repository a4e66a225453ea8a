import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { StreamableHTTPClientTransport, Client as V2Client } from "@modelcontextprotocol/client";
import {
  cleanupAfterEach,
  connectStdio,
  eventually,
  FIXTURE_TOOLS,
  fixtureEntry,
  ROOT,
  runCli,
  type Sandbox,
  startHttpProxy,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * `serve --passthrough SERVER`: one upstream under its own tool, prompt and resource names, with
 * the rest of the proxy in the path. It bridges a stdio client to an HTTP server (or back), and a
 * client of one MCP revision to a server of the other.
 */
const scope = cleanupAfterEach();
const CAPS = join(ROOT, "tests", "fixtures", "capabilities-server.ts");

async function passthroughStdio(sandbox: Sandbox, server: string) {
  const { client, close } = await connectStdio(sandbox, {}, ["--passthrough", server]);
  scope.defer(close);
  return client;
}

const textOf = (result: unknown) =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");

describe("serve --passthrough", () => {
  test("serves one server's tools under their own names; the other servers are never started", async () => {
    const sandbox = scope.sandbox();
    const otherStarts = join(sandbox.dir, "other-starts.log");
    sandbox.writeConfig({
      mcpServers: {
        fx: fixtureEntry(),
        other: fixtureEntry({ args: ["--name", "other"], env: { FIXTURE_START_LOG: otherStarts } }),
      },
    });
    const client = await passthroughStdio(sandbox, "fx");
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(FIXTURE_TOOLS);
    expect(tools.map((tool) => tool.name)).toContain("echo");
    expect(tools.map((tool) => tool.name)).not.toContain("retrieve_tools");
    expect(tools.some((tool) => tool.name.includes("__"))).toBe(false);
    // Deterministic order: by name.
    expect(tools.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.name).sort());
    const echoed = await client.callTool({ name: "echo", arguments: { message: "straight through" } });
    expect(textOf(echoed)).toBe("fixture echo: straight through");
    // The proxy still checks arguments against the tool's schema before forwarding.
    const wrong = await client.callTool({ name: "echo", arguments: { message: 42 } });
    expect(wrong.isError).toBe(true);
    expect(textOf(wrong)).toContain("Invalid arguments");
    const unknown = await client.callTool({ name: "other__echo", arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(existsSync(otherStarts)).toBe(false);
  });

  test("resources and prompts keep their own URIs and names", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { caps: { command: process.execPath, args: [CAPS] } } });
    const client = await passthroughStdio(sandbox, "caps");
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(["file:///etc/hostname"]);
    const read = await client.readResource({ uri: "file:///etc/hostname" });
    expect(read.contents[0]).toMatchObject({ uri: "file:///etc/hostname", text: "the-host-name" });
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(["greet"]);
    const prompt = await client.getPrompt({ name: "greet", arguments: { who: "Ada" } });
    expect(JSON.stringify(prompt.messages)).toContain("Say hello to Ada");
  });

  test("a 2026-07-28 client over HTTP reaches a 2025 stdio server through it", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    const proxy = await startHttpProxy(sandbox, ["--passthrough", "fx"]);
    scope.defer(() => proxy.stop());
    const client = new V2Client(
      { name: "modern", version: "1" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new StreamableHTTPClientTransport(proxy.url));
    scope.defer(() => client.close());
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("echo");
    const echoed = await client.callTool({ name: "echo", arguments: { message: "across eras" } });
    expect(textOf(echoed)).toBe("fixture echo: across eras");
  });

  test("approvals hold: a server's tools that wait for a person are neither listed nor called", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpproxy: { quarantineNewServers: true }, mcpServers: { fx: fixtureEntry() } });
    const client = await passthroughStdio(sandbox, "fx");
    expect((await client.listTools()).tools).toEqual([]);
    const held = await client.callTool({ name: "echo", arguments: { message: "x" } });
    expect(held.isError).toBe(true);
    const approved = await runCli(
      ["approve", "fx", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
      sandbox.env(),
    );
    expect(approved.code).toBe(0);
    const listed = await eventually(
      async () => (await client.listTools()).tools.map((tool) => tool.name),
      (names) => names.includes("echo"),
      10_000,
    );
    expect(listed).toContain("echo");
    expect(textOf(await client.callTool({ name: "echo", arguments: { message: "now" } }))).toBe(
      "fixture echo: now",
    );
  });

  test("leaves the other servers' tools in the shared index", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: { fx: fixtureEntry(), other: fixtureEntry({ args: ["--name", "other"] }) },
    });
    const env = sandbox.env();
    const common = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    expect((await runCli(["index", ...common], env)).code).toBe(0);
    const client = await passthroughStdio(sandbox, "fx");
    await client.callTool({ name: "echo", arguments: { message: "x" } });
    await client.close();
    const found = await runCli(["search", "echo", "--json", ...common], env);
    expect(found.stdout).toContain("other__echo");
  });

  test("a server that is not configured is a clear error", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    const result = await runCli(
      ["serve", "--passthrough", "nope", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
      sandbox.env(),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--passthrough nope: no server of that name");
    expect(result.stderr).toContain("fx");
  });
});
