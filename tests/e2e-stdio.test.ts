import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  connectStdio,
  createSandbox,
  eventually,
  everythingEntry,
  FIXTURE,
  fixtureEntry,
  initializeRequest,
  OWN_TOOLS_SORTED,
  requireBinary,
  retrieve,
  runCli,
  type Sandbox,
  watchOutput,
} from "./helpers.ts";

setDefaultTimeout(30_000);

/** The compiled binary over stdio, with the fixture server and the published server-everything upstream. */
describe("mcpproxy serve over stdio", () => {
  let sandbox: Sandbox;
  let proxy: Awaited<ReturnType<typeof connectStdio>>;

  beforeAll(async () => {
    sandbox = createSandbox();
    sandbox.writeConfig({
      mcpServers: {
        fixture: fixtureEntry({ env: { FIXTURE_VAR: "configured", GREETING: "${GREETING_SOURCE:-hello}" } }),
        everything: everythingEntry(),
      },
    });
    proxy = await connectStdio(sandbox, { SECRET_TOKEN: "must-not-leak", GREETING_SOURCE: "hi" });
  });
  afterAll(async () => {
    await proxy?.close();
    sandbox?.cleanup();
  });

  test("lists only retrieve_tools, call_tool, upstream_servers, tools_stat, get_tool_alternatives and read_result", async () => {
    const { tools } = await proxy.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(OWN_TOOLS_SORTED);
  });

  test("retrieve_tools finds tools of both upstreams, in the SPEC shape, best first", async () => {
    const found = await retrieve(proxy.client, "add two numbers and return the sum", 5);
    const names = found.tools.map((tool) => tool.name);
    expect(names).toContain("fixture__add_numbers");
    expect(names).toContain("everything__get-sum");
    expect(found.query).toBe("add two numbers and return the sum");
    for (const tool of found.tools) {
      const keys = Object.keys(tool);
      expect(keys).toEqual(
        expect.arrayContaining(["description", "inputSchema", "name", "score", "server", "tool"]),
      );
      const extras = keys.filter(
        (key) => !["description", "inputSchema", "name", "score", "server", "tool"].includes(key),
      );
      expect(["annotations", "outputSchema", "title"]).toEqual(expect.arrayContaining(extras));
    }
    const scores = found.tools.map((tool) => tool.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    const add = found.tools.find((tool) => tool.name === "fixture__add_numbers")!;
    expect(add).toMatchObject({ server: "fixture", tool: "add_numbers" });
    expect(add.inputSchema).toMatchObject({ required: ["a", "b"] });
  });

  test("retrieve_tools carries each tool's title, annotations and output schema as the upstream declared them", async () => {
    const echo = (await retrieve(proxy.client, "echo back a message", 5)).tools;
    expect(echo.find((tool) => tool.name === "everything__echo")?.annotations).toMatchObject({
      readOnlyHint: true,
    });
    expect(echo.find((tool) => tool.name === "fixture__echo")).toMatchObject({
      title: "Echo a message",
      annotations: { readOnlyHint: true, openWorldHint: false },
    });
    const add = (await retrieve(proxy.client, "add two numbers", 5)).tools.find(
      (tool) => tool.name === "fixture__add_numbers",
    );
    expect(add?.outputSchema).toEqual({
      type: "object",
      properties: { sum: { type: "number" } },
      required: ["sum"],
    });
    expect(add).not.toHaveProperty("annotations");
    // The title is searchable: "message" is in the fixture echo's title and parameters only.
    const byTitle = await retrieve(proxy.client, "Echo a message", 1);
    expect(byTitle.tools[0]?.name).toMatch(/__echo$/);
  });

  test("retrieve_tools respects top_k and returns an empty list with a hint when nothing matches", async () => {
    expect((await retrieve(proxy.client, "echo", 1)).tools).toHaveLength(1);
    // MCPPROXY_TOP_K (default 5) bounds what an agent gets; the schema says so, without a
    // `maximum` that a client checking its arguments would refuse 10 with.
    const { tools } = await proxy.client.listTools();
    const topK = (
      tools.find((tool) => tool.name === "retrieve_tools")!.inputSchema.properties as Record<
        string,
        { maximum?: number; description?: string }
      >
    ).top_k;
    expect(topK?.maximum).toBeUndefined();
    expect(topK?.description).toContain("at most 5");
    // More than the bound is clamped to it, and the answer says so.
    const tooMany = await proxy.client.callTool({
      name: "retrieve_tools",
      arguments: { query: "a tool that returns something", top_k: 10 },
    });
    expect(tooMany.isError).toBeFalsy();
    const clamped = tooMany.structuredContent as { tools: unknown[]; notes?: string[] };
    expect(clamped.tools).toHaveLength(5);
    expect(clamped.notes).toEqual([
      "top_k 10 is over this proxy's limit of 5 (MCPPROXY_TOP_K): up to 5 returned.",
    ]);
    expect((await retrieve(proxy.client, "echo", 5)) as { notes?: unknown }).not.toHaveProperty("notes");
    expect(
      (await retrieve(proxy.client, "a tool that returns something", 5)).tools.length,
    ).toBeLessThanOrEqual(5);
    const none = await retrieve(proxy.client, "zzyzx qwfp");
    expect(none.tools).toEqual([]);
    expect(none.hint).toContain("No tool matched");
  });

  test("the relevance floor keeps a long request's ranking and still gives a short off-topic one nothing but the hint", async () => {
    // Short and off-topic: each matches a tool by one common word ("number", "return"), below the floor.
    for (const offTopic of [
      "tell me a funny joke about a number of cats and dogs playing in the park",
      "plan a weekend hiking trip in the alps with my family and return a packing list",
    ]) {
      const none = await retrieve(proxy.client, offTopic);
      expect(none.tools).toEqual([]);
      expect(none.hint).toContain("No tool matched well enough");
    }
    // One long sentence (no step to search on its own): the right tool matches a few of its 53
    // content words, a small share of the request, but as much evidence as a short request needs.
    const long = await retrieve(
      proxy.client,
      "For the onboarding workshop on Thursday, where about thirty new colleagues from the sales, support and " +
        "finance departments will join remotely from four different offices, most of them on laptops with slow " +
        "connections, limited disk space and strict corporate proxies, and many of them unfamiliar with developer " +
        "tooling, command lines, configuration formats or anything else technical, I need a compressed copy of the " +
        "long welcome handbook with all its appendices, glossaries, contact sheets and policy summaries, made with " +
        "gzip, as a resource they can download during the session",
    );
    expect(long.tools[0]?.name).toBe("everything__gzip-file-as-resource");
    expect(long.tools[0]!.score).toBeLessThan(0.05);
    // A long task of several steps after a paragraph of context: every step's tool in the top 5.
    const task = await retrieve(
      proxy.client,
      "I am preparing a short demo of our tool server for the team meeting tomorrow morning, and since most " +
        "people there have never seen it, I want to walk through a few things slowly while explaining what " +
        "happens at each point. First, compress the handbook file with gzip so that everyone can download it " +
        "as a resource. Then switch the simulated logging on, so the audience sees log messages of random " +
        "levels arriving. After that, start a long running operation that reports its progress. Finally, add " +
        "two numbers and show the sum.",
    );
    const names = task.tools.map((tool) => tool.name);
    expect(names).toHaveLength(5);
    expect(names).toEqual(
      expect.arrayContaining([
        "everything__gzip-file-as-resource",
        "everything__toggle-simulated-logging",
        "everything__trigger-long-running-operation",
      ]),
    );
    expect(names.some((name) => name === "fixture__add_numbers" || name === "everything__get-sum")).toBe(
      true,
    );
    const scores = task.tools.map((tool) => tool.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  test("call_tool takes arguments sent as a JSON string of an object, as some clients send them", async () => {
    const result = await proxy.client.callTool({
      name: "call_tool",
      arguments: { name: "fixture__add_numbers", arguments: JSON.stringify({ a: 2, b: 3 }) },
    });
    expect(result.structuredContent).toEqual({ sum: 5 });
    const notAnObject = await proxy.client.callTool({
      name: "call_tool",
      arguments: { name: "fixture__add_numbers", arguments: "[1, 2]" },
    });
    expect(notAnObject.isError).toBe(true);
    expect(JSON.stringify(notAnObject.content)).toContain(
      "arguments must be an object (or a JSON string of one)",
    );
  });

  test("call_tool forwards to each upstream", async () => {
    const fromFixture = await proxy.client.callTool({
      name: "call_tool",
      arguments: { name: "fixture__echo", arguments: { message: "ping" } },
    });
    expect(fromFixture.content).toEqual([{ type: "text", text: "fixture echo: ping" }]);
    const fromEverything = await proxy.client.callTool({
      name: "call_tool",
      arguments: { name: "everything__get-sum", arguments: { a: 2, b: 40 } },
    });
    expect(JSON.stringify(fromEverything.content)).toContain("42");
  });

  test("returns image, audio, resources, structuredContent and _meta exactly as the upstream sent them", async () => {
    const direct = new Client({ name: "direct", version: "1.0.0" });
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE] }));
    try {
      for (const [tool, args] of [
        ["mixed_content", {}],
        ["add_numbers", { a: 1.5, b: 2 }],
        ["tiny_picture", {}],
        ["always_fails", {}],
      ] as const) {
        const expected = await direct.callTool({ name: tool, arguments: args });
        const proxied = await proxy.client.callTool({
          name: "call_tool",
          arguments: { name: `fixture__${tool}`, arguments: args },
        });
        expect(proxied).toEqual(expected);
      }
      const image = await proxy.client.callTool({
        name: "call_tool",
        arguments: { name: "everything__get-tiny-image" },
      });
      expect((image.content as { type: string }[]).some((block) => block.type === "image")).toBe(true);
    } finally {
      await direct.close();
    }
  });

  test("reports unknown tools, bad arguments and upstream rejections as isError results", async () => {
    const call = (args: Record<string, unknown>) =>
      proxy.client.callTool({ name: "call_tool", arguments: args });
    const text = (result: Awaited<ReturnType<typeof call>>) =>
      (result.content as { text: string }[])[0]!.text;

    const unknown = await call({ name: "nope__missing" });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toContain("retrieve_tools");

    const noName = await call({ arguments: {} });
    expect(noName.isError).toBe(true);
    expect(text(noName)).toBe("Invalid arguments for call_tool: name is required.");

    // Checked against the tool's input schema before it is forwarded, naming the field.
    const badArgs = await call({ name: "fixture__add_numbers", arguments: { a: "one", b: 2 } });
    expect(badArgs.isError).toBe(true);
    expect(text(badArgs)).toStartWith("Invalid arguments for fixture__add_numbers: a must be number.");
    const missing = await call({ name: "fixture__echo", arguments: {} });
    expect(text(missing)).toStartWith("Invalid arguments for fixture__echo: message is required.");
    // An optional argument sent as null (strict function calls do) is read as not given and left
    // out; a required one is still refused.
    const optionalNull = await call({ name: "fixture__show_environment", arguments: { values_of: null } });
    expect(optionalNull.isError).toBeFalsy();
    expect(JSON.parse(text(optionalNull))).toContain("FIXTURE_VAR");
    const requiredNull = await call({ name: "fixture__echo", arguments: { message: null } });
    expect(text(requiredNull)).toStartWith("Invalid arguments for fixture__echo: message must be string.");

    const badTopK = await proxy.client.callTool({
      name: "retrieve_tools",
      arguments: { query: "echo", top_k: 0 },
    });
    expect(badTopK.isError).toBe(true);
    expect(text(badTopK)).toContain("top_k must be a whole number of at least 1");

    const notBuiltin = await proxy.client.callTool({ name: "fixture__echo", arguments: { message: "x" } });
    expect(notBuiltin.isError).toBe(true);
    expect(text(notBuiltin)).toContain("retrieve_tools");
  });

  test("gives a stdio upstream its configured env and a safe baseline, not the proxy's environment", async () => {
    const result = await proxy.client.callTool({
      name: "call_tool",
      arguments: { name: "fixture__show_environment" },
    });
    const names = JSON.parse((result.content as { text: string }[])[0]!.text) as string[];
    expect(names).toContain("FIXTURE_VAR");
    expect(names).toContain("GREETING");
    expect(names).toContain("PATH");
    expect(names).not.toContain("SECRET_TOKEN");
    expect(names).not.toContain("GREETING_SOURCE");
  });

  test("re-indexes a server after list_changed; its new tool is quarantined until approved, then found and run", async () => {
    await proxy.client.callTool({
      name: "call_tool",
      arguments: { name: "fixture__grow_toolbox", arguments: { tool_name: "summon_unicorn" } },
    });
    // Indexed (the catalog knows it), but new on an approved server: not searchable, not callable.
    const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    const listed = await eventually(
      async () => (await runCli(["approve", ...flags], sandbox.env())).stdout,
      (out) => out.includes("fixture/summon_unicorn: new on its server"),
      10_000,
    );
    expect(listed).toContain("fixture/summon_unicorn: new on its server");
    expect(listed).toContain("description: A tool added at run time: summon_unicorn");
    expect((await retrieve(proxy.client, "summon unicorn")).tools.map((tool) => tool.name)).not.toContain(
      "fixture__summon_unicorn",
    );
    const refused = await proxy.client.callTool({
      name: "call_tool",
      arguments: { name: "fixture__summon_unicorn" },
    });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain("mcpproxy approve fixture/summon_unicorn");

    // Approved by another process while this proxy runs: it picks the approval up within a second.
    const approved = await runCli(["approve", "fixture/summon_unicorn", ...flags], sandbox.env());
    expect(approved.stdout).toContain("Approved 1 tool.");
    const names = await eventually(
      async () => (await retrieve(proxy.client, "summon unicorn")).tools.map((tool) => tool.name),
      (found) => found[0] === "fixture__summon_unicorn",
      10_000,
    );
    expect(names[0]).toBe("fixture__summon_unicorn");
    const ran = await proxy.client.callTool({
      name: "call_tool",
      arguments: { name: "fixture__summon_unicorn" },
    });
    expect(ran.content).toEqual([{ type: "text", text: "ran summon_unicorn" }]);
  });
});

describe("stdio hygiene", () => {
  test("stdout carries only JSON-RPC, and the proxy exits 0 when the client closes stdin", async () => {
    const sandbox = createSandbox();
    try {
      sandbox.writeConfig({
        mcpServers: {
          fixture: fixtureEntry({ args: ["--mode", "garbage"] }),
          broken: { command: "no-such-cmd-x" },
        },
      });
      const child = Bun.spawn(
        [requireBinary(), "serve", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
        {
          env: sandbox.env({ MCPPROXY_LOG_LEVEL: "debug" }),
          stdin: "pipe",
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      const stderr = new Response(child.stderr).text();
      const messages = [
        initializeRequest(),
        { jsonrpc: "2.0", method: "notifications/initialized" },
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "retrieve_tools", arguments: { query: "echo" } },
        },
        {
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "call_tool", arguments: { name: "fixture__echo", arguments: { message: "m" } } },
        },
      ];
      for (const message of messages) child.stdin.write(`${JSON.stringify(message)}\n`);
      child.stdin.flush();
      const stdout = watchOutput(child.stdout);
      await stdout.waitFor(/"id":3/, 15_000);
      child.stdin.end();
      expect(await child.exited).toBe(0);
      const lines = stdout.text().trim().split("\n");
      expect(lines).toHaveLength(3);
      for (const line of lines) expect(JSON.parse(line).jsonrpc).toBe("2.0");
      expect(await stderr).toContain("shutting down");
    } finally {
      sandbox.cleanup();
    }
  });
});

describe("the debug log", () => {
  test("logs every call with server, tool, duration, outcome and the shape of its arguments, never their values", async () => {
    const sandbox = createSandbox();
    sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() } });
    const proxy = await connectStdio(sandbox, { MCPPROXY_LOG_LEVEL: "debug" });
    try {
      await proxy.client.callTool({
        name: "call_tool",
        arguments: {
          name: "fixture__echo",
          arguments: { message: "hunter2-secret", extra: { n: 1, list: [1, 2] } },
        },
      });
      await proxy.client.callTool({ name: "call_tool", arguments: { name: "fixture__always_fails" } });
      const lines = proxy
        .stderr()
        .split("\n")
        .filter((line) => line.includes("DEBUG call "));
      expect(lines).toHaveLength(2);
      const [echo, fails] = lines.map((line) => JSON.parse(line.slice(line.indexOf("{"))));
      expect(echo).toMatchObject({
        server: "fixture",
        tool: "echo",
        outcome: "ok",
        arguments: { message: "string", extra: { n: "number", list: "array(2)" } },
      });
      expect(typeof echo.ms).toBe("number");
      expect(fails).toMatchObject({ tool: "always_fails", outcome: "isError", arguments: {} });
      expect(proxy.stderr()).not.toContain("hunter2-secret");
    } finally {
      await proxy.close();
      sandbox.cleanup();
    }
  });
});

describe("serve --log-level", () => {
  test("debug logs every call, as docs/operations.md says; an unknown level is refused naming the flag", async () => {
    const sandbox = createSandbox();
    try {
      sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() } });
      const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
      const transport = new StdioClientTransport({
        command: requireBinary(),
        args: ["serve", "--log-level", "debug", ...flags],
        env: sandbox.env(),
        stderr: "pipe",
      });
      let stderr = "";
      transport.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const client = new Client({ name: "e2e-test", version: "1.0.0" });
      await client.connect(transport);
      try {
        await client.callTool({
          name: "call_tool",
          arguments: { name: "fixture__echo", arguments: { message: "hi" } },
        });
        expect(stderr).toContain("DEBUG call ");
      } finally {
        await client.close();
      }
      const bad = await runCli(["serve", "--log-level", "verbose", ...flags], sandbox.env());
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--log-level: must be one of error, warn, info, debug");
    } finally {
      sandbox.cleanup();
    }
  });
});

describe("a server with validateArguments: false", () => {
  test("gets the arguments as they are, and its own rejection comes back as an isError result", async () => {
    const sandbox = createSandbox();
    sandbox.writeConfig({ mcpServers: { fixture: { ...fixtureEntry(), validateArguments: false } } });
    const proxy = await connectStdio(sandbox);
    try {
      const result = await proxy.client.callTool({
        name: "call_tool",
        arguments: { name: "fixture__add_numbers", arguments: { a: "one", b: 2 } },
      });
      expect(result.isError).toBe(true);
      expect((result.content as { text: string }[])[0]!.text).toContain(
        "Server fixture rejected add_numbers (JSON-RPC error -32602): a and b must be numbers",
      );
    } finally {
      await proxy.close();
      sandbox.cleanup();
    }
  });
});

describe("the log", () => {
  test("never shows a token a server echoes in its errors", async () => {
    const sandbox = createSandbox();
    sandbox.writeConfig({
      mcpServers: {
        leaky: {
          ...fixtureEntry({ args: ["--mode", "exit-on-init"] }),
          env: { FIXTURE_FATAL: "login failed with ghp_abcdefghijklmnopqrstuvwxyz0123456789" },
        },
      },
    });
    const result = await runCli(
      ["index", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
      sandbox.env({ MCPPROXY_LOG_LEVEL: "debug" }),
    );
    sandbox.cleanup();
    expect(result.stderr + result.stdout).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz0123456789");
    expect(result.stderr).toContain("[REDACTED:github-token]");
  });
});
