import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { StreamableHTTPClientTransport, Client as V2Client } from "@modelcontextprotocol/client";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  cleanupAfterEach,
  connectHttp,
  connectStdio,
  eventually,
  fixtureEntry,
  initializeRequest,
  type Retrieved,
  ROOT,
  retrieve,
  runCli,
  type Sandbox,
  startHttpProxy,
} from "./helpers.ts";

setDefaultTimeout(90_000);

/**
 * Profiles (issue 25 item 1): named subsets of the catalog served at /mcp/p/<name> over HTTP and
 * with `serve --profile <name>` over stdio. Each endpoint sees its own servers and tools only, in
 * search, calls, dynamic registration, resources, prompts, statistics and upstream_servers.
 */
const scope = cleanupAfterEach();
const CAPS = join(ROOT, "tests", "fixtures", "capabilities-server.ts");

/**
 * alpha and caps carry the tag `work`; beta none. `work` takes the tagged servers but alpha's
 * always_fails; `b` takes beta's echo and add_* tools only.
 */
function writeProfiles(sandbox: Sandbox, extra: Record<string, unknown> = {}) {
  sandbox.writeConfig({
    mcpServers: {
      alpha: { ...fixtureEntry({ args: ["--name", "alpha"] }), tags: ["work"] },
      beta: fixtureEntry({ args: ["--name", "beta"] }),
      caps: {
        command: process.execPath,
        args: [CAPS],
        env: { CAPS_SUBSCRIBE_LOG: join(sandbox.dir, "subscribe.log") },
        tags: ["work"],
      },
    },
    mcpproxy: {
      stats: true,
      profiles: {
        work: { tags: ["work"], tools: ["!alpha/always_fails"] },
        b: { servers: ["beta"], tools: ["beta/echo", "beta__add_*"] },
      },
      ...extra,
    },
  });
}

const textOf = (result: unknown) =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");

const names = (found: Retrieved) => found.tools.map((tool) => tool.name);

/** Searches until every server has indexed (each profile's search shows only its own hits). */
async function indexed(client: Client, query: string, wanted: string) {
  return eventually(
    () => retrieve(client, query, 20),
    (found) => names(found).includes(wanted),
    30_000,
  );
}

async function httpProxy(sandbox: Sandbox, args: string[] = []) {
  const proxy = await startHttpProxy(sandbox, args);
  scope.defer(() => proxy.stop());
  const at = (path: string) => new URL(path, proxy.url);
  const client = async (path: string) => {
    const connected = await connectHttp(at(path));
    scope.defer(() => connected.close());
    return connected;
  };
  return { proxy, at, client };
}

describe("profiles over HTTP", () => {
  test("each profile sees only its own servers' tools in search, calls, resources, prompts, stats and upstream_servers", async () => {
    const sandbox = scope.sandbox();
    writeProfiles(sandbox);
    const { client } = await httpProxy(sandbox);
    const all = await client("/mcp");
    const work = await client("/mcp/p/work");
    const b = await client("/mcp/p/b");
    expect(names(await indexed(all, "echo a message back", "beta__echo"))).toContain("alpha__echo");

    const workFound = await indexed(work, "echo a message back", "alpha__echo");
    expect(workFound.tools.every((tool) => tool.server === "alpha" || tool.server === "caps")).toBe(true);
    const failing = await retrieve(work, "a tool that always fails", 20);
    expect(names(failing)).not.toContain("alpha__always_fails");
    const bFound = await indexed(b, "echo a message back", "beta__echo");
    expect(new Set(names(bFound))).toEqual(
      new Set(names(bFound).filter((name) => name === "beta__echo" || name.startsWith("beta__add_"))),
    );
    expect(names(await retrieve(b, "add two numbers", 20))).toContain("beta__add_numbers");

    // Calls: the profile's own tools run; any other is "No tool named", exactly as a tool that does not exist.
    const echoed = await b.callTool({
      name: "call_tool",
      arguments: { name: "beta__echo", arguments: { message: "hi" } },
    });
    expect(textOf(echoed)).toBe("beta echo: hi");
    for (const [session, name] of [
      [b, "alpha__echo"],
      [b, "beta__always_fails"],
      [work, "beta__echo"],
      [work, "alpha__always_fails"],
    ] as const) {
      const refused = await session.callTool({ name: "call_tool", arguments: { name, arguments: {} } });
      expect(refused.isError).toBe(true);
      const missing = await session.callTool({
        name: "call_tool",
        arguments: { name: "no_such__tool", arguments: {} },
      });
      expect(textOf(refused)).toBe(textOf(missing).replaceAll("no_such__tool", name));
    }
    // The whole proxy still has them.
    expect(
      textOf(
        await all.callTool({
          name: "call_tool",
          arguments: { name: "alpha__echo", arguments: { message: "x" } },
        }),
      ),
    ).toBe("alpha echo: x");

    // Federation: resources and prompts of the profile's servers only.
    const workResources = await work.listResources();
    expect(workResources.resources.length).toBeGreaterThan(0);
    expect(workResources.resources.every((resource) => resource.uri.startsWith("mcpproxy://caps/"))).toBe(
      true,
    );
    expect((await b.listResources()).resources).toEqual([]);
    expect((await work.listPrompts()).prompts.map((prompt) => prompt.name)).toContain("caps__greet");
    expect((await b.listPrompts()).prompts).toEqual([]);
    expect((await work.listResourceTemplates()).resourceTemplates.length).toBeGreaterThan(0);
    expect((await b.listResourceTemplates()).resourceTemplates).toEqual([]);
    const uri = workResources.resources[0]!.uri;
    await expect(b.readResource({ uri })).rejects.toThrow(/no server named caps/);
    await expect(b.getPrompt({ name: "caps__greet", arguments: { who: "Ada" } })).rejects.toThrow();
    expect(
      JSON.stringify((await work.getPrompt({ name: "caps__greet", arguments: { who: "Ada" } })).messages),
    ).toContain("Ada");

    // tools_stat: the figures of the profile's servers only.
    await all.callTool({
      name: "call_tool",
      arguments: { name: "alpha__echo", arguments: { message: "y" } },
    });
    const stat = async (session: Client) =>
      (await session.callTool({ name: "tools_stat", arguments: { top: 100 } })).structuredContent as {
        top: { server: string }[];
        totals: { servers: number; indexedTools: number };
      };
    const bStats = await eventually(
      () => stat(b),
      (report) => report.top.length > 0,
      5_000,
    );
    expect(bStats.top.map((row) => row.server)).toEqual(["beta"]);
    expect((await stat(work)).top.every((row) => row.server === "alpha")).toBe(true);
    expect((await stat(all)).top.map((row) => row.server).sort()).toEqual(["alpha", "beta"]);

    // upstream_servers: list only, and only the profile's servers.
    const listed = await b.callTool({ name: "upstream_servers", arguments: { operation: "list" } });
    expect((listed.structuredContent as { servers: { name: string }[] }).servers.map((s) => s.name)).toEqual([
      "beta",
    ]);
    // A server's tool count is the profile's share: patterns do not tell how many tools they hide.
    const rows = async (session: Client) =>
      (
        (await session.callTool({ name: "upstream_servers", arguments: { operation: "list" } }))
          .structuredContent as { servers: { name: string; tools: number }[] }
      ).servers;
    const alphaTools = (await rows(all)).find((row) => row.name === "alpha")!.tools;
    expect(alphaTools).toBeGreaterThan(1);
    expect((await rows(work)).find((row) => row.name === "alpha")!.tools).toBe(alphaTools - 1);
    expect((await rows(b)).find((row) => row.name === "beta")!.tools).toBe(2);
    const added = await work.callTool({
      name: "upstream_servers",
      arguments: { operation: "add", name: "evil", server: { command: "true" } },
    });
    expect(added.isError).toBe(true);
    const { tools } = await work.listTools();
    const own = tools.find((tool) => tool.name === "upstream_servers")?.inputSchema as unknown as {
      properties: { operation: { enum: string[] } };
    };
    expect(own.properties.operation.enum).toEqual(["list"]);
  });

  test("a 2026-07-28 client at /mcp/p/<name> gets the same list whatever it asked before, and only its tools", async () => {
    const sandbox = scope.sandbox();
    writeProfiles(sandbox);
    const { at, client } = await httpProxy(sandbox);
    await indexed(await client("/mcp"), "echo a message back", "beta__echo");
    const modern = new V2Client(
      { name: "modern", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await modern.connect(new StreamableHTTPClientTransport(at("/mcp/p/b")));
    scope.defer(() => modern.close());
    expect(modern.getProtocolEra()).toBe("modern");
    const before = (await modern.listTools()).tools.map((tool) => tool.name);
    const found = (await modern.callTool({
      name: "retrieve_tools",
      arguments: { query: "echo a message back", top_k: 20 },
    })) as { structuredContent?: Retrieved };
    expect(found.structuredContent!.tools.map((tool) => tool.server)).toEqual(
      found.structuredContent!.tools.map(() => "beta"),
    );
    expect(found.structuredContent!.tools.map((tool) => tool.name)).toContain("beta__echo");
    const refused = await modern.callTool({
      name: "call_tool",
      arguments: { name: "alpha__echo", arguments: { message: "x" } },
    });
    expect(textOf(refused)).toContain("No tool named alpha__echo");
    const after = (await modern.listTools()).tools.map((tool) => tool.name);
    expect(after).toEqual(before);
  });

  test("listen streams, subscriptions and get_tool_alternatives stay within the profile", async () => {
    const sandbox = scope.sandbox();
    writeProfiles(sandbox);
    const { at, client } = await httpProxy(sandbox);
    const work = await client("/mcp/p/work");
    await indexed(work, "echo a message back", "alpha__echo");
    const uri = (await work.listResources()).resources[0]!.uri;
    const listen = async (path: string) => {
      const modern = new V2Client(
        { name: "listener", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await modern.connect(new StreamableHTTPClientTransport(at(path)));
      scope.defer(() => modern.close());
      return (
        (await modern.listen({ resourceSubscriptions: [uri] })).honoredFilter.resourceSubscriptions ?? []
      );
    };
    expect(await listen("/mcp/p/b")).toEqual([]);
    expect(await listen("/mcp/p/work")).toEqual([uri]);
    const b = await client("/mcp/p/b");
    await expect(b.subscribeResource({ uri })).rejects.toThrow(/no server named caps/);
    const alternatives = await b.callTool({
      name: "get_tool_alternatives",
      arguments: { name: "alpha__echo" },
    });
    expect(textOf(alternatives)).toContain("No tool named alpha__echo");
    const own = await b.callTool({ name: "get_tool_alternatives", arguments: { name: "beta__echo" } });
    expect(own.isError).toBeFalsy();
    const offered = (own.structuredContent as { alternatives: { server: string }[] }).alternatives;
    expect(offered.every((alternative) => alternative.server === "beta")).toBe(true);
  });

  test("dynamic routing registers only the profile's tools, and a tool outside it cannot be called by name", async () => {
    const sandbox = scope.sandbox();
    writeProfiles(sandbox);
    const { client } = await httpProxy(sandbox, ["--routing", "dynamic"]);
    await indexed(await client("/mcp"), "echo a message back", "beta__echo");
    const b = await client("/mcp/p/b");
    const found = await retrieve(b, "echo a message back", 20);
    expect(names(found)).toContain("beta__echo");
    const listed = (await b.listTools()).tools.map((tool) => tool.name);
    expect(listed).toContain("beta__echo");
    expect(listed.filter((name) => name.includes("__") && !name.startsWith("beta__"))).toEqual([]);
    // The attacker's test: dynamic routing forwards any indexed tool called by its own name; not past a profile.
    const direct = await b.callTool({ name: "alpha__echo", arguments: { message: "x" } });
    expect(direct.isError).toBe(true);
    expect(textOf(direct)).toContain("No tool named alpha__echo");
    const ok = await b.callTool({ name: "beta__echo", arguments: { message: "z" } });
    expect(textOf(ok)).toBe("beta echo: z");
  });

  test("serve logs each profile's URL; an unknown profile is a 404 naming the profiles; a session cannot cross endpoints; the status page is scoped", async () => {
    const sandbox = scope.sandbox();
    writeProfiles(sandbox);
    const { proxy, at, client } = await httpProxy(sandbox);
    const origin = proxy.url.origin;
    for (const name of ["work", "b"]) {
      const line = `serving the profile ${name} at ${origin}/mcp/p/${name} (status page ${origin}/p/${name}/)`;
      await proxy.stderr.waitFor(new RegExp(line.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")), 10_000);
    }
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(at(path), {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify(body),
      });
    const unknown = await post("/mcp/p/nope", initializeRequest());
    expect(unknown.status).toBe(404);
    const error = (await unknown.json()) as { error: { message: string } };
    expect(error.error.message).toBe("Unknown profile nope: the profiles are work, b");

    const opened = await post("/mcp/p/b", initializeRequest());
    const sessionId = opened.headers.get("mcp-session-id")!;
    expect(sessionId).toBeTruthy();
    await opened.body?.cancel();
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    for (const path of ["/mcp/p/work", "/mcp"]) {
      const crossed = await post(path, list, {
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-06-18",
      });
      expect(crossed.status).toBe(404);
      await crossed.body?.cancel();
    }

    await indexed(await client("/mcp"), "echo a message back", "beta__echo");
    const page = await (await fetch(at("/p/b/"))).text();
    expect(page).toContain("profile b");
    expect(page).toContain("<td>beta</td>");
    expect(page).not.toContain("<td>alpha</td>");
    const searched = await (await fetch(at("/p/b/?q=echo%20a%20message"))).text();
    expect(searched).toContain("beta__echo");
    expect(searched).not.toContain("alpha__echo");
    const whole = await (await fetch(at("/"))).text();
    expect(whole).toContain("<td>alpha</td>");
    expect((await fetch(at("/p/nope/"))).status).toBe(404);
  });

  test("a person tagging a server in the running config brings it into the profile", async () => {
    const sandbox = scope.sandbox();
    writeProfiles(sandbox);
    const { client } = await httpProxy(sandbox);
    const work = await client("/mcp/p/work");
    expect(names(await indexed(work, "echo a message back", "alpha__echo"))).not.toContain("beta__echo");
    const config = JSON.parse(await Bun.file(sandbox.configPath).text());
    config.mcpServers.beta.tags = ["work"];
    sandbox.writeConfig(config);
    expect(names(await indexed(work, "echo a message back", "beta__echo"))).toContain("beta__echo");
    const echoed = await work.callTool({
      name: "call_tool",
      arguments: { name: "beta__echo", arguments: { message: "now" } },
    });
    expect(textOf(echoed)).toBe("beta echo: now");
  });

  test("an agent cannot tag a server through upstream_servers", async () => {
    const sandbox = scope.sandbox();
    writeProfiles(sandbox);
    const { client } = await httpProxy(sandbox);
    const all = await client("/mcp");
    const tagged = await all.callTool({
      name: "upstream_servers",
      arguments: { operation: "update", name: "beta", server: { tags: ["work"] } },
    });
    expect(tagged.isError).toBe(true);
    expect(textOf(tagged)).toContain("tags");
    const added = await all.callTool({
      name: "upstream_servers",
      arguments: { operation: "add", name: "sneaky", server: { command: "true", tags: ["work"] } },
    });
    expect(added.isError).toBe(true);
    expect(await Bun.file(sandbox.configPath).text()).not.toContain("sneaky");
  });
});

describe("profiles over stdio (serve --profile)", () => {
  test("search, calls, resources and upstream_servers are the profile's", async () => {
    const sandbox = scope.sandbox();
    writeProfiles(sandbox);
    const { client, close } = await connectStdio(sandbox, {}, ["--profile", "b"]);
    scope.defer(close);
    const found = await indexed(client, "echo a message back", "beta__echo");
    expect(found.tools.every((tool) => tool.server === "beta")).toBe(true);
    const refused = await client.callTool({
      name: "call_tool",
      arguments: { name: "alpha__echo", arguments: { message: "x" } },
    });
    expect(textOf(refused)).toContain("No tool named alpha__echo");
    const ok = await client.callTool({
      name: "call_tool",
      arguments: { name: "beta__add_numbers", arguments: { a: 2, b: 3 } },
    });
    expect(ok.isError).toBeFalsy();
    expect((await client.listResources()).resources).toEqual([]);
    const listed = await client.callTool({ name: "upstream_servers", arguments: { operation: "list" } });
    expect((listed.structuredContent as { servers: { name: string }[] }).servers.map((s) => s.name)).toEqual([
      "beta",
    ]);
  });

  test("an unknown profile, or --profile with HTTP or --passthrough, exits 2 with a clear message", async () => {
    const sandbox = scope.sandbox();
    writeProfiles(sandbox);
    const base = ["serve", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    const unknown = await runCli([...base, "--profile", "nope"], sandbox.env());
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--profile nope: no such profile");
    expect(unknown.stderr).toContain("the profiles are work, b");
    const http = await runCli(
      [...base, "--profile", "b", "--transport", "http", "--port", "0"],
      sandbox.env(),
    );
    expect(http.code).toBe(2);
    expect(http.stderr).toContain("/mcp/p/b");
    const passthrough = await runCli([...base, "--profile", "b", "--passthrough", "beta"], sandbox.env());
    expect(passthrough.code).toBe(2);
    expect(passthrough.stderr).toContain("do not go together");
  });
});

describe("profile configuration", () => {
  test("import --snippet --profile prints the entry of the profile, stdio and HTTP", async () => {
    const sandbox = scope.sandbox();
    writeProfiles(sandbox, { port: 8123 });
    const result = await runCli(
      ["import", "--snippet", "--profile", "work", "--config", sandbox.configPath],
      sandbox.env(),
    );
    expect(result.code).toBe(0);
    const first = JSON.parse(
      result.stdout.slice(result.stdout.indexOf("{"), result.stdout.indexOf("\n}") + 2),
    );
    expect(first.mcpServers["mcpproxy-work"].args).toEqual([
      "serve",
      "--config",
      sandbox.configPath,
      "--profile",
      "work",
    ]);
    expect(result.stdout).toContain("http://127.0.0.1:8123/mcp/p/work");
    expect(result.stdout).toContain(`"url": "http://127.0.0.1:8123/mcp/p/work"`);
    const unknown = await runCli(
      ["import", "--snippet", "--profile", "nope", "--config", sandbox.configPath],
      sandbox.env(),
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("the profiles are work, b");
    // Bound on every interface: reached on loopback from here, with the bearer token it then needs.
    writeProfiles(sandbox, { host: "0.0.0.0", port: 8123 });
    const open = await runCli(
      ["import", "--snippet", "--profile", "b", "--config", sandbox.configPath],
      sandbox.env(),
    );
    expect(open.stdout).toContain(`"url": "http://127.0.0.1:8123/mcp/p/b"`);
    expect(open.stdout).toContain('"Authorization: Bearer <token>"');
    expect(open.stdout).toContain("http-token");
  });

  test("bad profiles and tags are config errors naming their path", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: { alpha: { ...fixtureEntry(), tags: ["has space"] } },
      mcpproxy: {
        profiles: {
          "bad/name": { servers: ["alpha"] },
          typo: { server: ["alpha"] },
          pattern: { tools: ["a/b/c", "!"] },
          list: { servers: "alpha" },
        },
      },
    });
    const result = await runCli(
      ["serve", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
      sandbox.env(),
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("mcpServers.alpha.tags");
    expect(result.stderr).toContain("mcpproxy.profiles.bad/name");
    expect(result.stderr).toContain("mcpproxy.profiles.typo.server");
    expect(result.stderr).toContain("did you mean `servers`");
    expect(result.stderr).toContain("mcpproxy.profiles.pattern.tools.0");
    expect(result.stderr).toContain("mcpproxy.profiles.pattern.tools.1");
    expect(result.stderr).toContain("mcpproxy.profiles.list.servers");
  });

  test("a profile naming a server or tag nobody has is a warning, and the profile holds the rest", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: { beta: fixtureEntry({ args: ["--name", "beta"] }) },
      mcpproxy: { profiles: { p: { servers: ["beta", "gone"], tags: ["nobody"] } } },
    });
    const { client, close, stderr } = await connectStdio(sandbox, {}, ["--profile", "p"]);
    scope.defer(close);
    expect(names(await indexed(client, "echo a message back", "beta__echo"))).toContain("beta__echo");
    expect(stderr()).toContain("profile p names the server gone, which is not configured");
    expect(stderr()).toContain("profile p names the tag nobody, which no configured server carries");
  });
});

describe("profiles with --routing all", () => {
  test("a profile's endpoint lists every approved tool of the profile, and none of the others", async () => {
    const sandbox = scope.sandbox();
    writeProfiles(sandbox, { routing: "all" });
    const { client } = await httpProxy(sandbox);
    const whole = await client("/mcp");
    await indexed(whole, "echo a message", "beta__echo");
    const b = await client("/mcp/p/b");
    const listed = await eventually(
      async () => (await b.listTools()).tools.map((tool) => tool.name),
      (tools) => tools.includes("beta__echo"),
      15_000,
    );
    const upstream = listed.filter((name) => name.includes("__"));
    expect(upstream).toContain("beta__echo");
    expect(upstream.every((name) => name === "beta__echo" || name.startsWith("beta__add_"))).toBe(true);
    expect(listed).toContain("retrieve_tools");
    // The whole endpoint lists alpha's tools; the profile's never does.
    expect((await whole.listTools()).tools.map((tool) => tool.name)).toContain("alpha__echo");
    const refused = await b.callTool({ name: "alpha__echo", arguments: { message: "x" } });
    expect(refused.isError).toBe(true);
  });
});
