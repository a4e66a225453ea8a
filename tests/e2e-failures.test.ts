import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  connectStdio,
  createSandbox,
  FIXTURE,
  FIXTURE_TOOLS,
  fixtureEntry,
  retrieve,
  runCli,
  type Sandbox,
} from "./helpers.ts";

setDefaultTimeout(30_000);

const sandboxes: Sandbox[] = [];
afterEach(() => {
  for (const sandbox of sandboxes.splice(0)) sandbox.cleanup();
});
function sandboxWith(servers: Record<string, unknown>) {
  const sandbox = createSandbox();
  sandboxes.push(sandbox);
  sandbox.writeConfig({ mcpServers: servers });
  return sandbox;
}

const brokenServers = {
  good: fixtureEntry(),
  missing: { command: "mcpproxy-no-such-command-anywhere" },
  crashes: fixtureEntry({ args: ["--mode", "exit-on-init"] }),
  hangs: fixtureEntry({ args: ["--mode", "hang"], timeoutMs: 1500 }),
  garbage: fixtureEntry({ args: ["--mode", "garbage", "--name", "noisy"] }),
};

describe("upstream failures", () => {
  test("index reports each broken server with its reason and stderr, indexes the others, exits 1", async () => {
    const sandbox = sandboxWith(brokenServers);
    const result = await runCli(
      ["index", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
      sandbox.env(),
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("2 of 5 servers indexed");
    expect(result.stdout).toMatch(new RegExp(`ok\\s+good: ${FIXTURE_TOOLS} tools`));
    expect(result.stdout).toMatch(new RegExp(`ok\\s+garbage: ${FIXTURE_TOOLS} tools`));
    expect(result.stdout).toMatch(/FAILED\s+missing: command not found: mcpproxy-no-such-command-anywhere/);
    expect(result.stdout).toMatch(/FAILED\s+crashes: the server closed the connection during initialize/);
    expect(result.stdout).toContain("fatal: cannot open the database");
    expect(result.stdout).toMatch(/FAILED\s+hangs: did not finish initialize and tools\/list within 1500 ms/);
    expect(result.stdout).toContain("starting up very slowly");
  });

  test("serve answers from the servers that work while the others fail", async () => {
    const sandbox = sandboxWith(brokenServers);
    const proxy = await connectStdio(sandbox);
    try {
      const found = await retrieve(proxy.client, "echo back the message");
      // Two servers run the same fixture: both echo tools tie for first place.
      expect(
        found.tools
          .slice(0, 2)
          .map((tool) => tool.name)
          .sort(),
      ).toEqual(["garbage__echo", "good__echo"]);
      const called = await proxy.client.callTool({
        name: "call_tool",
        arguments: { name: "garbage__echo", arguments: { message: "still works" } },
      });
      expect(called.content).toEqual([{ type: "text", text: "noisy echo: still works" }]);
      expect(proxy.stderr()).toContain("missing: could not connect: command not found");
      // The answer did not wait for the server that hangs; the indexing pass ends when it times out.
      for (let i = 0; i < 100 && !proxy.stderr().includes("servers indexed"); i++) await Bun.sleep(50);
      expect(proxy.stderr()).toContain("2 of 5 servers indexed");
    } finally {
      await proxy.close();
    }
  });

  test("serve starts with no reachable server and no index, says so, and search returns a hint", async () => {
    const sandbox = sandboxWith({ missing: { command: "mcpproxy-no-such-command-anywhere" } });
    const proxy = await connectStdio(sandbox);
    try {
      const found = await retrieve(proxy.client, "anything at all");
      expect(found.tools).toEqual([]);
      expect(found.hint).toContain("No tools are indexed yet");
      for (let i = 0; i < 50 && !proxy.stderr().includes("no upstream server could be reached"); i++)
        await Bun.sleep(50);
      expect(proxy.stderr()).toContain("no upstream server could be reached and there is no saved index");
    } finally {
      await proxy.close();
    }
  });

  test("a tool call to a server that died reconnects it once, on demand", async () => {
    const marker = `solo-${crypto.randomUUID()}`;
    const sandbox = sandboxWith({ solo: fixtureEntry({ args: ["--name", marker] }) });
    const proxy = await connectStdio(sandbox);
    try {
      await retrieve(proxy.client, "echo");
      const pid = Number((await Bun.$`pgrep -f ${marker}`.nothrow().text()).trim());
      expect(pid).toBeGreaterThan(0);
      process.kill(pid, "SIGKILL");
      for (let i = 0; i < 50 && !proxy.stderr().includes("disconnected"); i++) await Bun.sleep(50);
      const called = await proxy.client.callTool({
        name: "call_tool",
        arguments: { name: "solo__echo", arguments: { message: "back again" } },
      });
      expect(called.content).toEqual([{ type: "text", text: `${marker} echo: back again` }]);
    } finally {
      await proxy.close();
    }
  });

  test("a server that was down at start is retried in the background and its tools appear", async () => {
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const port = probe.port;
    await probe.stop(true);
    const sandbox = sandboxWith({ late: { url: `http://127.0.0.1:${port}/mcp` } });
    const proxy = await connectStdio(sandbox, { MCPPROXY_LOG_LEVEL: "debug" });
    const late = Bun.spawn([process.execPath, FIXTURE, "--http", String(port), "--name", "late"], {
      stdout: "ignore",
    });
    try {
      expect((await retrieve(proxy.client, "echo back the message")).tools).toEqual([]);
      let names: string[] = [];
      for (let i = 0; i < 150 && !names.includes("late__echo"); i++) {
        await Bun.sleep(100);
        names = (await retrieve(proxy.client, "echo back the message")).tools.map((tool) => tool.name);
      }
      if (names[0] !== "late__echo") console.error(proxy.stderr());
      expect(names[0]).toBe("late__echo");
      expect(proxy.stderr()).toContain(`reconnected (${FIXTURE_TOOLS} tools)`);
    } finally {
      late.kill();
      await proxy.close();
    }
  });

  test("malformed entries in a tools/list are left out and named; the server's other tools are indexed", async () => {
    const sandbox = sandboxWith({ sloppy: fixtureEntry({ env: { FIXTURE_MALFORMED_TOOLS: "1" } }) });
    const result = await runCli(
      ["index", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
      sandbox.env(),
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `ok      sloppy: ${FIXTURE_TOOLS} tools (left out 2 malformed: no_schema (no inputSchema object), a tool without a name)`,
    );
  });
});
