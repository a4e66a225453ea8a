import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  cleanupAfterEach,
  connectStdio,
  eventually,
  FIXTURE_TOOLS,
  fixtureEntry,
  httpProxyWithClient,
  modernEntry,
  retrieve,
  runCli,
  type Sandbox,
  startModernHttpFixture,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * Issue 22, item 4: mcpproxy speaks both protocol eras to its upstreams. Each server's era is
 * found (server/discover, else initialize), remembered in the catalog and used on the next run;
 * a 2026-07-28 server gets lenient lists and results, capabilities per request, Mcp-Param-*
 * headers over HTTP and a listen stream for its list changes. The v1 fixture server stands for
 * the 2025 era, tests/fixtures/modern-server.ts (SDK v2) for 2026-07-28.
 */
const scope = cleanupAfterEach();
type Kind = "stdio" | "http";

/** A modern fixture server entry: a child over stdio, or one started over HTTP (stopped after the test). */
async function modernServer(kind: Kind, args: string[], env: Record<string, string> = {}) {
  if (kind === "stdio") return modernEntry({ args, env });
  const remote = await startModernHttpFixture(args, env);
  scope.defer(() => remote.stop());
  return { url: remote.url };
}

async function index(sandbox: Sandbox, servers: Record<string, unknown>) {
  sandbox.writeConfig({ mcpServers: servers });
  const result = await runCli(
    ["index", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
    sandbox.env(),
  );
  if (result.code !== 0)
    console.error(`mcpproxy index: exit ${result.code}\n${result.stdout}${result.stderr}`);
  return result;
}

/** `serve` over stdio with a v1 client, its first indexing done. */
async function serve(servers: Record<string, unknown>, query = "echo a message back") {
  const sandbox = scope.sandbox();
  sandbox.writeConfig({ mcpServers: servers });
  const proxy = await connectStdio(sandbox);
  scope.defer(() => proxy.close());
  await retrieve(proxy.client, query);
  return { sandbox, client: proxy.client, stderr: proxy.stderr };
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  return (await client.callTool({ name: "call_tool", arguments: { name, arguments: args } })) as {
    content: { type: string; text?: string }[];
    isError?: boolean;
  };
}

const textOf = (result: { content: { text?: string }[] }) => result.content[0]?.text ?? "";

async function upstreamRows(client: Client) {
  const listed = await client.callTool({ name: "upstream_servers", arguments: { operation: "list" } });
  return (
    listed.structuredContent as { servers: { name: string; state: string; protocolVersion?: string }[] }
  ).servers;
}

/** The lines of a log file a fixture appends to (none when it was never written). */
const lines = (file: string) =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : [];

describe("serving a 2026-07-28 upstream", () => {
  for (const kind of ["stdio", "http"] as const) {
    test(`calls the tools of a modern-only upstream over ${kind}, and upstream_servers list names its protocol`, async () => {
      const { client } = await serve({ modern: await modernServer(kind, ["--modern-only"]) });
      const echoed = await call(client, "modern__echo", { message: "hi" });
      expect(echoed.isError).toBeFalsy();
      expect(textOf(echoed)).toBe("modern echo: hi");
      expect(textOf(await call(client, "modern__add", { a: 2, b: 3 }))).toBe("5");
      const [row] = await upstreamRows(client);
      expect(row).toMatchObject({ name: "modern", state: "connected", protocolVersion: "2026-07-28" });
    });
  }

  test("a dual-era upstream is spoken to in 2026-07-28, a v1 upstream in 2025; doctor says which", async () => {
    const servers = { dual: modernEntry(), legacy: fixtureEntry() };
    const { sandbox, client } = await serve(servers);
    const rows = Object.fromEntries((await upstreamRows(client)).map((row) => [row.name, row]));
    expect(rows.dual?.protocolVersion).toBe("2026-07-28");
    expect(rows.legacy?.protocolVersion).toBe("2025-11-25");
    expect(textOf(await call(client, "dual__echo", { message: "new" }))).toBe("modern echo: new");
    expect(textOf(await call(client, "legacy__echo", { message: "old" }))).toBe("fixture echo: old");
    const doctor = await runCli(
      ["doctor", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
      sandbox.env(),
    );
    expect(doctor.stdout).toMatch(
      /server dual\s+started and answered server\/discover in \d+ ms: 2 tool\(s\); it is modern 2\.0\.0, protocol 2026-07-28 \(modern era\)/,
    );
    expect(doctor.stdout).toMatch(
      new RegExp(
        `server legacy\\s+started and answered initialize in \\d+ ms: ${FIXTURE_TOOLS} tool\\(s\\).*protocol 2025-11-25 \\(legacy era\\)`,
      ),
    );
  });

  test("over HTTP /health and the status page show the protocol; a live modern server stays connected through its checks, a dead one is noticed", async () => {
    const probes = join(scope.sandbox().dir, "probes.log");
    const remote = await startModernHttpFixture(["--modern-only"], { FIXTURE_PROBE_LOG: probes });
    scope.defer(() => remote.stop());
    const { proxy, health } = await httpProxyWithClient(
      scope,
      { remote: { url: remote.url } },
      { MCPPROXY_HEALTH_CHECK_MS: "200" },
    );
    const server = async () => (await health()).servers.find((row) => row.name === "remote")!;
    const up = await eventually(server, (row) => row.state === "connected", 20_000);
    expect(up.protocolVersion).toBe("2026-07-28");
    expect(await (await fetch(new URL("/", proxy.url))).text()).toContain("<td>2026-07-28</td>");
    // Each health check of a modern server is a server/discover (ping would fail on it and drop it).
    const checked = await eventually(
      () => lines(probes).length,
      (count) => count >= 4,
      20_000,
    );
    expect(checked).toBeGreaterThanOrEqual(4);
    expect((await server()).state).toBe("connected");
    remote.stop();
    await remote.child.exited;
    const gone = await eventually(server, (row) => row.state !== "connected", 20_000);
    expect(gone.state).toBe("failed");
    expect(gone.error).toContain("the server stopped answering");
  });
});

describe("each server's era, remembered between runs", () => {
  test("a server that exits on the probe is indexed with one extra start, and without one on the next run", async () => {
    const sandbox = scope.sandbox();
    const starts = join(sandbox.dir, "starts.log");
    const servers = { rmcp: fixtureEntry({ args: ["--exit-on-probe"], env: { FIXTURE_START_LOG: starts } }) };
    const first = await index(sandbox, servers);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`ok      rmcp: ${FIXTURE_TOOLS} tools`);
    expect(lines(starts)).toHaveLength(2);
    const second = await index(sandbox, servers);
    expect(second.code).toBe(0);
    expect(lines(starts)).toHaveLength(3);
  });

  test("a verdict is used on the next run without a probe, and judged again when the server changes era", async () => {
    const sandbox = scope.sandbox();
    const probes = join(sandbox.dir, "probes.log");
    const upgradable = (era: string) => ({
      upgradable: modernEntry({ env: { FIXTURE_ERA: era, FIXTURE_PROBE_LOG: probes } }),
    });
    // A 2025 server: probed once, then spoken to in 2025 at once.
    expect((await index(sandbox, upgradable("legacy"))).code).toBe(0);
    expect(lines(probes)).toHaveLength(1);
    expect((await index(sandbox, upgradable("legacy"))).code).toBe(0);
    expect(lines(probes)).toHaveLength(1);
    // Upgraded in place to 2026-07-28 only: the stored verdict fails (initialize refused), it is probed again.
    const upgraded = await index(sandbox, upgradable("modern-only"));
    expect(upgraded.code).toBe(0);
    expect(upgraded.stdout).toContain("ok      upgradable: 2 tools");
    expect(lines(probes)).toHaveLength(2);
    // And the new verdict is used from then on.
    expect((await index(sandbox, upgradable("modern-only"))).code).toBe(0);
    expect(lines(probes)).toHaveLength(2);
  });

  test("over HTTP a modern verdict is used on the next run without a probe", async () => {
    const sandbox = scope.sandbox();
    const probes = join(sandbox.dir, "probes.log");
    const servers = { remote: await modernServer("http", ["--modern-only"], { FIXTURE_PROBE_LOG: probes }) };
    expect((await index(sandbox, servers)).code).toBe(0);
    expect(lines(probes)).toHaveLength(1);
    const again = await index(sandbox, servers);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("2 tools (0 added, 0 updated, 0 removed, 2 unchanged)");
    expect(lines(probes)).toHaveLength(1);
  });
});

describe("lists and results of a 2026-07-28 upstream", () => {
  for (const kind of ["stdio", "http"] as const) {
    test(`tools the SDK would refuse are left out and reported, the others indexed (${kind})`, async () => {
      const servers = { sloppy: await modernServer(kind, ["--modern-only", "--malformed-tools"]) };
      const result = await index(scope.sandbox(), servers);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("2 tools (2 added");
      expect(result.stdout).toContain(
        "left out 2 malformed: no_schema (no inputSchema object), bad_description (",
      );
    });
  }

  test("a server cannot write the proxy's own note of the tools it left out", async () => {
    const servers = { spoofer: modernEntry({ args: ["--modern-only", "--spoof-meta"] }) };
    const result = await index(scope.sandbox(), servers);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("ok      spoofer: 2 tools");
    expect(result.stdout).not.toContain("SPOOFED");
  });

  test("a content block of a type the revision does not define does not fail the call: it reaches the agent as text", async () => {
    const { client } = await serve({ odd: modernEntry({ args: ["--modern-only", "--odd-content"] }) });
    const result = await call(client, "odd__odd_content");
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([
      {
        type: "text",
        text: '[a content block of type "hologram" that MCP does not define, passed on as text: {"type":"hologram","frames":3}]',
      },
      { type: "text", text: "odd content" },
    ]);
  });

  for (const kind of ["stdio", "http"] as const) {
    test(`a modern upstream whose tools change is re-indexed (its listen stream, ${kind})`, async () => {
      // trust auto: a new tool of a known server is otherwise held until a person approves it.
      const server = await modernServer(kind, ["--modern-only", "--changing"]);
      const { client, stderr } = await serve({ changing: { ...server, trust: "auto" } });
      const before = await retrieve(client, "late tool appeared after the server started");
      expect(before.tools.map((tool) => tool.name)).not.toContain("changing__late_tool");
      expect(textOf(await call(client, "changing__change_tools"))).toBe("late_tool added");
      const after = await eventually(
        () => retrieve(client, "late tool appeared after the server started"),
        (found) => found.tools.some((tool) => tool.name === "changing__late_tool"),
        20_000,
      );
      expect(stderr()).toContain("[upstream:changing] tool list changed (4 tools)");
      expect(after.tools.map((tool) => tool.name)).toContain("changing__late_tool");
    });
  }
});

describe("capabilities and headers per request", () => {
  test("a modern upstream is told no capabilities at connect or with a call, and the union when its tools are listed", async () => {
    const probes = join(scope.sandbox().dir, "probes.log");
    const { client } = await serve(
      {
        capable: modernEntry({
          args: ["--modern-only", "--capable-tools"],
          env: { FIXTURE_PROBE_LOG: probes },
        }),
      },
      "ask the user a question",
    );
    expect(lines(probes)).toEqual(["{}"]);
    // Listed only to a client that can elicit: the listing asked with every capability a caller may have.
    const found = await retrieve(client, "ask the user a question");
    expect(found.tools.map((tool) => tool.name)).toContain("capable__ask_user");
    expect(textOf(await call(client, "capable__client_capabilities"))).toBe("{}");
  });

  test("over HTTP marked arguments reach the server as Mcp-Param headers, Base64 where they must; a tool with an invalid mark is left out", async () => {
    const servers = { headers: await modernServer("http", ["--modern-only", "--header-tools"]) };
    const indexed = await index(scope.sandbox(), servers);
    expect(indexed.stdout).toContain(
      "ok      headers: 3 tools (left out 1 malformed: bad_header_tool (invalid x-mcp-header",
    );
    // Over stdio there are no headers: the same tool is kept.
    const overStdio = await index(scope.sandbox(), {
      headers: modernEntry({ args: ["--modern-only", "--header-tools"] }),
    });
    expect(overStdio.stdout).toContain("ok      headers: 4 tools");

    const { client } = await serve(servers, "answer the Mcp-Param headers");
    const plain = await call(client, "headers__header_tool", {
      region: "eu-west",
      count: 3,
      options: { dry_run: true },
    });
    expect(JSON.parse(textOf(plain))).toEqual({
      "mcp-param-region": "eu-west",
      "mcp-param-count": "3",
      "mcp-param-dry-run": "true",
    });
    // A value that is not visible ASCII (an attempt to inject a header among it) goes Base64, whole.
    const region = "Zürich\r\nX-Injected: 1";
    const wrapped = JSON.parse(textOf(await call(client, "headers__header_tool", { region }))) as Record<
      string,
      string
    >;
    expect(Object.keys(wrapped)).toEqual(["mcp-param-region"]);
    const encoded = /^=\?base64\?(.*)\?=$/.exec(wrapped["mcp-param-region"]!)?.[1];
    expect(Buffer.from(encoded ?? "", "base64").toString("utf8")).toBe(region);
  });
});
