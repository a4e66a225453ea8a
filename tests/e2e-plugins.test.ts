import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  cleanupAfterEach,
  connectStdio,
  eventually,
  FIXTURE_TOOLS,
  fixtureEntry,
  ROOT,
  retrieve,
  runCli,
  type Sandbox,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/** Plugins loaded by the compiled binary at run time, from a directory outside the repository. */

const scope = cleanupAfterEach();
let sandbox: Sandbox;

/** Copies the example plugins where a user would keep them, away from the repo and its node_modules. */
function copyExamples(into: string): string {
  mkdirSync(into, { recursive: true });
  for (const file of readdirSync(join(ROOT, "plugins")).filter((name) => name.endsWith(".ts"))) {
    copyFileSync(join(ROOT, "plugins", file), join(into, file));
  }
  expect(existsSync(join(into, "node_modules"))).toBe(false);
  return into;
}

const callTool = (client: Awaited<ReturnType<typeof connectStdio>>["client"], name: string, args: object) =>
  client.callTool({ name: "call_tool", arguments: { name, arguments: args } });
const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content ?? []).map((block) => block.text ?? "").join("");

describe("the example plugins, copied outside the repository", () => {
  test("rank, redact, guard and notify through the compiled binary", async () => {
    sandbox = scope.sandbox();
    const dir = copyExamples(join(sandbox.dir, "my-plugins"));
    sandbox.writeConfig({
      mcpServers: { alpha: fixtureEntry(), beta: fixtureEntry() },
      mcpproxy: {
        plugins: [
          { path: join(dir, "boost-server.ts"), options: { server: "beta", pin: true } },
          join(dir, "redact-secrets.ts"),
          { path: join(dir, "guard-destructive.ts"), options: { allow: ["alpha__remove_tool"] } },
          join(dir, "notify-on-change.ts"),
        ],
      },
    });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());

    // boost-server pins beta: both servers have the same tools, beta's come first.
    const found = await retrieve(proxy.client, "return a tiny picture or echo back the message", 5);
    const servers = found.tools.map((tool) => tool.server);
    expect(servers).toContain("alpha");
    expect(servers).toEqual([...servers].sort().reverse()); // every beta tool before every alpha tool
    expect(found.tools[0]?.name).toMatch(/^beta__/);

    // redact-secrets: a token in a result never reaches the agent.
    const token = `ghp_${"a1B2".repeat(9)}`;
    const echoed = await callTool(proxy.client, "beta__echo", { message: `use ${token} please` });
    expect(textOf(echoed)).toBe("fixture echo: use [REDACTED:github-token] please");

    // guard-destructive: a destructive tool is refused unless allowed.
    const refused = await callTool(proxy.client, "beta__remove_tool", { tool_name: "echo" });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("beta__remove_tool is marked as destructive");
    const allowed = await callTool(proxy.client, "alpha__remove_tool", { tool_name: "tiny_picture" });
    expect(textOf(allowed)).toBe("removed tiny_picture");

    // notify-on-change: the first indexing, then alpha dropping a tool, each one line.
    const changes = join(sandbox.dataDir, "tool-changes.jsonl");
    const lines = await eventually(
      () => (existsSync(changes) ? readFileSync(changes, "utf8").trim().split("\n") : []),
      (all) => all.length >= 2,
      10_000,
    );
    const events = lines.map((line) => JSON.parse(line));
    expect(events[0]).toMatchObject({ reason: "catalog", removed: [] });
    expect(events[0].added).toHaveLength(2 * FIXTURE_TOOLS);
    expect(events[1]).toMatchObject({ reason: "catalog", added: [], removed: ["alpha__tiny_picture"] });
    expect(proxy.stderr()).toContain(
      "plugins: guard-destructive, boost-server, redact-secrets, notify-on-change",
    );
  });

  test("search applies the same rankers as retrieve_tools", async () => {
    sandbox = scope.sandbox();
    const dir = copyExamples(join(sandbox.dir, "p"));
    sandbox.writeConfig({
      mcpServers: { alpha: fixtureEntry(), beta: fixtureEntry() },
      mcpproxy: {
        plugins: [{ path: join(dir, "boost-server.ts"), options: { server: "beta", pin: true } }],
      },
    });
    const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    expect((await runCli(["index", ...flags], sandbox.env())).code).toBe(0);
    const out = await runCli(
      ["search", "echo back the message", "--json", "--top-k", "2", ...flags],
      sandbox.env(),
    );
    // Equal scores: without the ranker alpha's echo comes first.
    expect(JSON.parse(out.stdout).tools.map((tool: { name: string }) => tool.name)).toEqual([
      "beta__echo",
      "alpha__echo",
    ]);
  });
});

describe("plugins that go wrong", () => {
  function configWith(plugins: unknown[], files: Record<string, string>) {
    sandbox = scope.sandbox();
    const dir = join(sandbox.dir, "plugins");
    mkdirSync(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    sandbox.writeConfig({ mcpServers: {}, mcpproxy: { plugins } });
    return ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
  }

  test("a plugin that does not load stops the proxy (exit 2) with every reason; an optional one is left out with a warning", async () => {
    const flags = configWith(["./plugins/broken.ts", "./plugins/number.ts", "./plugins/missing.ts"], {
      "broken.ts": "export default { name: 'broken', rankResults( };",
      "number.ts": "export default 42;",
    });
    for (const command of [["search", "anything"], ["serve"], ["index"]]) {
      const result = await runCli([...command, ...flags], sandbox.env());
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("3 plugins named in the config could not be loaded");
      expect(result.stderr).toContain(`${join(sandbox.dir, "plugins", "broken.ts")}: it failed to load`);
      expect(result.stderr).toContain("number.ts: it has no default export that is a plugin object");
      expect(result.stderr).toContain("missing.ts: the file does not exist");
    }

    const lenient = configWith([{ path: "./plugins/missing.ts", optional: true }, "./plugins/typo.ts"], {
      "typo.ts": "export default { name: 'typo', beforeToolcall() {} };",
    });
    const result = await runCli(["search", "anything", ...lenient], sandbox.env());
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("optional plugin not loaded:");
    expect(result.stderr).toContain("missing.ts: the file does not exist");
    expect(result.stderr).toContain(
      "beforeToolcall is not a hook and will never run (did you mean beforeToolCall?)",
    );
    const strict = await runCli(
      ["search", "anything", ...lenient],
      sandbox.env({ MCPPROXY_STRICT_PLUGINS: "1" }),
    );
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain("beforeToolcall is not a hook");
  });

  test("options that fail the plugin's valibot schema are a config error, exit 2", async () => {
    const flags = configWith([{ path: "./plugins/picky.ts", options: { level: "eleven" } }], {
      "picky.ts": `import * as v from "valibot";
export default { name: "picky", optionsSchema: v.object({ level: v.pipe(v.number("level must be a number"), v.maxValue(10)) }) };`,
    });
    const result = await runCli(["search", "anything", ...flags], sandbox.env());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("The options of plugin picky");
    expect(result.stderr).toContain("options.level: level must be a number");
  });

  test("--strict-plugins makes a failing hook an error the agent sees; without it the call goes through", async () => {
    const flags = configWith(["./plugins/thrower.ts"], {
      "thrower.ts": `export default { name: "thrower", beforeToolCall() { throw new Error("policy service down"); } };`,
    });
    sandbox.writeConfig({
      mcpServers: { fixture: fixtureEntry() },
      mcpproxy: { plugins: ["./plugins/thrower.ts"] },
    });
    expect(flags).toContain(sandbox.configPath);
    for (const strict of [false, true]) {
      const proxy = await connectStdio(sandbox, strict ? { MCPPROXY_STRICT_PLUGINS: "true" } : {});
      try {
        const result = await callTool(proxy.client, "fixture__echo", { message: "hi" });
        if (strict) {
          expect(result.isError).toBe(true);
          expect(textOf(result)).toBe(
            "plugin thrower: beforeToolCall failed: policy service down (--strict-plugins)",
          );
        } else {
          expect(textOf(result)).toBe("fixture echo: hi");
          expect(proxy.stderr()).toContain(
            "plugin thrower: beforeToolCall failed: policy service down; kept the previous value",
          );
        }
      } finally {
        await proxy.close();
      }
    }
  });
});

describe("built-in truncation", () => {
  test("cuts long text blocks to N + a marker + the last 50 characters, and leaves images and structuredContent alone", async () => {
    sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() } });
    const proxy = await connectStdio(sandbox, { MCPPROXY_TRUNCATE_OUTPUT_LEN: "100" });
    scope.defer(() => proxy.close());
    const long = await callTool(proxy.client, "fixture__big_result", { bytes: 1000 });
    expect(textOf(long)).toBe(
      `${"x".repeat(100)}\n[... 850 characters cut by mcpproxy (MCPPROXY_TRUNCATE_OUTPUT_LEN=100) ...]\n${"x".repeat(50)}`,
    );
    const edge = await callTool(proxy.client, "fixture__big_result", { bytes: 150 });
    expect(textOf(edge)).toBe("x".repeat(150));
    const mixed = await callTool(proxy.client, "fixture__mixed_content", {});
    expect((mixed.content as { type: string }[]).map((block) => block.type)).toEqual([
      "text",
      "image",
      "audio",
      "resource",
      "resource_link",
    ]);
    const sum = await callTool(proxy.client, "fixture__add_numbers", { a: 1, b: 2 });
    expect(sum.structuredContent).toEqual({ sum: 3 });
  });
});

describe("the built-in list-changed exec hook", () => {
  async function dynamicProxy(exec: string) {
    sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() }, mcpproxy: { routing: "dynamic" } });
    const proxy = await connectStdio(sandbox, { MCPPROXY_LIST_CHANGED_EXEC: exec });
    scope.defer(() => proxy.close());
    let notified = 0;
    proxy.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      notified++;
      await proxy.client.listTools();
    });
    return { proxy, notified: () => notified };
  }

  test("runs the command with the change after a session's registered tools change", async () => {
    const out = join(scope.sandbox().dir, "changes.txt");
    const { proxy } = await dynamicProxy(
      `sh -c 'echo "$MCPPROXY_EVENT_REASON $MCPPROXY_TOOLS_ADDED" >> "${out}"'`,
    );
    await retrieve(proxy.client, "echo back the message", 1);
    const written = await eventually(
      () => (existsSync(out) ? readFileSync(out, "utf8") : ""),
      (text) => text !== "",
      10_000,
    );
    expect(written).toBe("retrieved fixture__echo\n");
  });

  test("a command that fails, hangs or floods its output is logged, bounded, and never reaches the agent", async () => {
    const { proxy } = await dynamicProxy("sh -c 'head -c 10000000 /dev/zero | tr \"\\0\" x; exit 3'");
    const found = await retrieve(proxy.client, "echo back the message", 1);
    expect(found.tools[0]?.name).toBe("fixture__echo");
    const line = await eventually(
      () =>
        proxy
          .stderr()
          .split("\n")
          .find((l) => l.includes("[plugin:list-changed-exec]")) ?? "",
      (l) => l !== "",
      10_000,
    );
    expect(line).toContain("sh failed after");
    expect(line).toContain("exit code 3");
    expect(line.length).toBeLessThan(4_000);
    await proxy.close();

    const hanging = await dynamicProxy("sleep 30");
    await retrieve(hanging.proxy.client, "add two numbers", 1);
    const echo = await callTool(hanging.proxy.client, "fixture__echo", { message: "not blocked" });
    expect(textOf(echo)).toBe("fixture echo: not blocked");
    await eventually(
      () => hanging.proxy.stderr(),
      (text) => text.includes("did not finish within 5000 ms"),
      15_000,
    );
  });
});
