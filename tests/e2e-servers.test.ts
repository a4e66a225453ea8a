import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  connectStdio,
  createSandbox,
  eventually,
  FIXTURE,
  FIXTURE_TOOLS,
  fixtureEntry,
  runCli,
  type Sandbox,
} from "./helpers.ts";

// A loaded 2-core machine can be slow without anything being wrong: a generous bound, not 5 s.
setDefaultTimeout(60_000);

/**
 * Servers changed while the proxy runs, through the compiled binary: by the agent with
 * `upstream_servers`, and by hand in the watched config file. A client session stays connected
 * throughout and keeps calling a server that is not touched.
 */
const sandboxes: Sandbox[] = [];
afterEach(() => {
  for (const sandbox of sandboxes.splice(0)) sandbox.cleanup();
});

type Proxy = Awaited<ReturnType<typeof connectStdio>>;

const structured = (result: unknown) =>
  (result as { structuredContent: Record<string, unknown> }).structuredContent;
const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");

async function servers(proxy: Proxy, operation = "list", extra: Record<string, unknown> = {}) {
  return proxy.client.callTool(
    { name: "upstream_servers", arguments: { operation, ...extra } },
    CallToolResultSchema,
    {
      timeout: 30_000,
    },
  );
}

async function found(proxy: Proxy, query: string): Promise<string[]> {
  const result = await proxy.client.callTool({ name: "retrieve_tools", arguments: { query } });
  return (structured(result).tools as { name: string }[]).map((tool) => tool.name);
}

async function echo(proxy: Proxy) {
  const result = await proxy.client.callTool({
    name: "call_tool",
    arguments: { name: "fx__echo", arguments: { message: "still here" } },
  });
  return textOf(result);
}

/** Whether `check` comes true within the time (the shared polling loop of helpers.ts). */
const until = (check: () => Promise<boolean>, timeoutMs = 15_000) => eventually(check, (ok) => ok, timeoutMs);

function start(config: unknown, env: Record<string, string> = {}) {
  const sandbox = createSandbox();
  sandboxes.push(sandbox);
  sandbox.writeConfig(config);
  return { sandbox, proxy: connectStdio(sandbox, env) };
}

const config = (sandbox: Sandbox) =>
  JSON.parse(readFileSync(sandbox.configPath, "utf8")) as {
    mcpServers: Record<string, Record<string, unknown>>;
  };

describe("upstream_servers", () => {
  test("the agent adds, updates, disables, enables and removes a server; the file follows; the session stays", async () => {
    const { sandbox, proxy: starting } = start({ mcpServers: { fx: fixtureEntry() } });
    const proxy = await starting;
    try {
      expect(await echo(proxy)).toContain("still here");
      const listed = structured(await servers(proxy)).servers as {
        name: string;
        state: string;
        tools: number;
      }[];
      expect(listed).toEqual([
        expect.objectContaining({ name: "fx", state: "connected", tools: FIXTURE_TOOLS }),
      ]);

      // Added by the agent: written to the file marked as the agent's; nothing of it runs until approved.
      const added = structured(
        await servers(proxy, "add", { name: "second", server: fixtureEntry({ args: ["--name", "second"] }) }),
      );
      expect(added.applied).toEqual({ added: ["second"], removed: [], changed: [] });
      expect(config(sandbox).mcpServers.second).toMatchObject({ agent: { change: "added" } });
      const second = (added.servers as { name: string; state: string; quarantinedTools: number }[]).find(
        (server) => server.name === "second",
      );
      expect(second).toMatchObject({ state: "awaiting-approval", tools: 0 });
      expect((await found(proxy, "add two numbers")).some((name) => name.startsWith("second__"))).toBe(false);

      // Update merges fields; a timeout is not what it runs, so it still waits as it did.
      const updated = structured(
        await servers(proxy, "update", { name: "second", server: { callTimeoutMs: 5000 } }),
      );
      expect(updated.applied).toEqual({ added: [], removed: [], changed: ["second"] });
      expect(config(sandbox).mcpServers.second).toMatchObject({
        callTimeoutMs: 5000,
        agent: { change: "added" },
      });
      expect(updated.awaitingApproval).toEqual(["second"]);

      const disabled = structured(await servers(proxy, "disable", { name: "fx" }));
      expect(disabled.applied).toEqual({ added: [], removed: [], changed: ["fx"] });
      expect(config(sandbox).mcpServers.fx).toMatchObject({ enabled: false });
      expect((await found(proxy, "echo a message")).some((name) => name.startsWith("fx__"))).toBe(false);

      // The agent enables it again: the person disabled it, so it waits for the person.
      const enabled = structured(await servers(proxy, "enable", { name: "fx" }));
      expect(enabled.awaitingApproval).toEqual(["fx"]);
      const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
      expect((await runCli(["approve", "fx", ...flags], sandbox.env())).code).toBe(0);
      expect(await until(async () => (await found(proxy, "echo a message")).includes("fx__echo"))).toBe(true);

      const removed = structured(await servers(proxy, "remove", { name: "second" }));
      expect(removed.applied).toEqual({ added: [], removed: ["second"], changed: [] });
      expect(config(sandbox).mcpServers.second).toBeUndefined();
      expect(await echo(proxy)).toContain("still here");
    } finally {
      await proxy.close();
    }
  }, 60_000);

  test("an invalid entry is refused with the field named, and the file is left as it was", async () => {
    const { sandbox, proxy: starting } = start({ mcpServers: { fx: fixtureEntry() } });
    const proxy = await starting;
    try {
      const before = readFileSync(sandbox.configPath, "utf8");
      const refused = await servers(proxy, "add", { name: "broken", server: { command: 42 } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain("mcpServers.broken.command");
      expect(readFileSync(sandbox.configPath, "utf8")).toBe(before);
      const duplicate = await servers(proxy, "add", { name: "fx", server: fixtureEntry() });
      expect(textOf(duplicate)).toContain("fx exists already");
      const unknown = await servers(proxy, "remove", { name: "nope" });
      expect(textOf(unknown)).toContain("No server named nope");
    } finally {
      await proxy.close();
    }
  }, 30_000);

  test("readOnly hides the changes from agents", async () => {
    const { proxy: starting } = start({ mcpServers: { fx: fixtureEntry() }, mcpproxy: { readOnly: true } });
    const proxy = await starting;
    try {
      const { tools } = await proxy.client.listTools();
      const tool = tools.find((t) => t.name === "upstream_servers");
      expect((tool!.inputSchema.properties as { operation: { enum: string[] } }).operation.enum).toEqual([
        "list",
      ]);
      const refused = await servers(proxy, "remove", { name: "fx" });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain("operation must be one of list");
    } finally {
      await proxy.close();
    }
  }, 30_000);
});

describe("the watched config file", () => {
  test("a hand edit adds a server without a restart; an invalid edit keeps the last good config; own writes apply once", async () => {
    const { sandbox, proxy: starting } = start({ mcpServers: { fx: fixtureEntry() } });
    const proxy = await starting;
    try {
      const edited = config(sandbox);
      edited.mcpServers.second = fixtureEntry({ args: ["--name", "second"] });
      writeFileSync(sandbox.configPath, JSON.stringify(edited, null, 2));
      expect(
        await until(async () => (await found(proxy, "add two numbers")).includes("second__add_numbers")),
      ).toBe(true);

      writeFileSync(sandbox.configPath, JSON.stringify({ mcpServers: { bad: { command: 42 } } }));
      expect(await until(async () => proxy.stderr().includes("keeping the last good one"))).toBe(true);
      expect(proxy.stderr()).toContain("mcpServers.bad.command");
      expect(await found(proxy, "add two numbers")).toContain("second__add_numbers");
      expect(await echo(proxy)).toContain("still here");

      // Put a good file back, then change it through the tool: applied once, not again by the watcher.
      writeFileSync(sandbox.configPath, JSON.stringify(edited, null, 2));
      await until(async () => (proxy.stderr().match(/config applied/g) ?? []).length >= 1);
      await Bun.sleep(500);
      const applies = (proxy.stderr().match(/config applied/g) ?? []).length;
      await servers(proxy, "disable", { name: "second" });
      await Bun.sleep(1000);
      expect((proxy.stderr().match(/config applied/g) ?? []).length).toBe(applies + 1);
    } finally {
      await proxy.close();
    }
  }, 60_000);
});

describe("mcpproxy servers", () => {
  test("a bad --entry is blamed on the argument, not the config file, and the file is left as it was", async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    const before = readFileSync(sandbox.configPath, "utf8");
    const args = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    const badField = await runCli(
      ["servers", "add", "x", "--entry", '{"command": 42}', ...args],
      sandbox.env(),
    );
    expect(badField.code).toBe(2);
    expect(badField.stderr).toContain(
      "--entry is not a valid server entry for x (1 problem); nothing was changed.",
    );
    expect(badField.stderr).toContain("mcpServers.x.command");
    expect(badField.stderr).not.toContain("config file");
    const badUpdate = await runCli(
      ["servers", "update", "fx", "--entry", '{"timeoutMs": "soon"}', ...args],
      sandbox.env(),
    );
    expect(badUpdate.code).toBe(2);
    expect(badUpdate.stderr).toContain("--entry is not a valid server entry for fx");
    expect(badUpdate.stderr).not.toContain("config file");
    const notObject = await runCli(["servers", "add", "y", "--entry", "[1, 2]", ...args], sandbox.env());
    expect(notObject.code).toBe(2);
    expect(notObject.stderr).toContain("--entry must be a JSON object");
    const badUrl = await runCli(["servers", "add", "z", "--url", "ftp://host/mcp", ...args], sandbox.env());
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain("--url is not a valid server entry for z");
    expect(readFileSync(sandbox.configPath, "utf8")).toBe(before);
  });

  test("the command adds, disables and removes a server in the file, and a running proxy follows", async () => {
    const { sandbox, proxy: starting } = start({ mcpServers: { fx: fixtureEntry() } });
    const proxy = await starting;
    const args = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    try {
      const added = await runCli(
        ["servers", "add", "second", ...args, "--", process.execPath, FIXTURE, "--name", "second"],
        sandbox.env(),
      );
      expect(added.code).toBe(0);
      expect(added.stdout).toContain("Added second");
      expect(config(sandbox).mcpServers.second).toEqual({
        command: process.execPath,
        args: [FIXTURE, "--name", "second"],
      });
      expect(
        await until(async () => (await found(proxy, "add two numbers")).includes("second__add_numbers")),
      ).toBe(true);
      const listed = await runCli(["servers", "list", "--json", ...args], sandbox.env());
      const rows = (JSON.parse(listed.stdout) as { servers: { name: string; enabled: boolean }[] }).servers;
      expect(rows.map((row) => row.name)).toEqual(["fx", "second"]);

      expect((await runCli(["servers", "disable", "second", ...args], sandbox.env())).code).toBe(0);
      expect(config(sandbox).mcpServers.second).toMatchObject({ enabled: false });
      expect(
        await until(async () => !(await found(proxy, "add two numbers")).includes("second__add_numbers")),
      ).toBe(true);
      const bad = await runCli(
        ["servers", "update", "fx", "--entry", '{"timeoutMs": "soon"}', ...args],
        sandbox.env(),
      );
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("mcpServers.fx.timeoutMs");
      expect(config(sandbox).mcpServers.fx).toEqual(fixtureEntry());
      expect((await runCli(["servers", "remove", "second", ...args], sandbox.env())).code).toBe(0);
      expect(config(sandbox).mcpServers.second).toBeUndefined();
      expect(await echo(proxy)).toContain("still here");
    } finally {
      await proxy.close();
    }
  }, 60_000);
});

describe("mcpproxy servers as a newcomer meets it (issue 34, item 10)", () => {
  /** A fresh HOME: no ~/.mcpproxy, no config anywhere; the command runs from an empty directory. */
  function freshHome() {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    mkdirSync(sandbox.home, { recursive: true });
    return sandbox;
  }

  test("a missing NAME or target is answered in the command line's words, and nothing is created", async () => {
    const sandbox = freshHome();
    const run = (...args: string[]) => runCli(["servers", ...args], sandbox.env(), sandbox.home);
    const noTarget = await run("add", "foo");
    expect(noTarget.code).toBe(2);
    expect(noTarget.stderr).toBe(
      "mcpproxy: servers add needs what the server is: mcpproxy servers add foo --url URL | --entry JSON | " +
        "-- COMMAND [ARGS…] (e.g. mcpproxy servers add foo -- npx -y @modelcontextprotocol/server-memory).\n",
    );
    const noName = await run("add");
    expect(noName.stderr).toContain(
      "servers add needs a NAME and what the server is: mcpproxy servers add NAME",
    );
    const noFields = await run("update", "foo");
    expect(noFields.stderr).toContain(
      "servers update needs the fields to change: mcpproxy servers update foo --entry JSON",
    );
    expect((await run("remove")).stderr).toContain(
      "servers remove needs a NAME: mcpproxy servers remove NAME.",
    );
    expect((await run("frob", "foo")).stderr).toContain(
      "servers: no operation frob; the operations are list, add, update, remove, enable, disable.",
    );
    for (const result of [noTarget, noName, noFields]) {
      expect(result.code).toBe(2);
      // The agent tool's parameter names mean nothing on a command line.
      expect(result.stderr).not.toContain("`name`");
      expect(result.stderr).not.toContain("`server`");
    }
    expect(existsSync(join(sandbox.home, ".mcpproxy"))).toBe(false);
  }, 60_000);

  test("the first add on a fresh HOME creates the config and names no backup; the next one keeps the previous file as .bak", async () => {
    const sandbox = freshHome();
    const run = (...args: string[]) => runCli(["servers", ...args], sandbox.env(), sandbox.home);
    const configPath = join(sandbox.home, ".mcpproxy", "mcp_config.json");
    const first = await run("add", "web", "--url", "http://127.0.0.1:9/mcp");
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toStartWith(`Added web in ${configPath} (a new file). `);
    expect(first.stdout).not.toContain(".bak");
    expect(existsSync(`${configPath}.bak`)).toBe(false);
    const written = readFileSync(configPath, "utf8");

    const second = await run("add", "other", "--url", "http://127.0.0.1:9/other");
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`(the previous file is ${configPath}.bak)`);
    expect(readFileSync(`${configPath}.bak`, "utf8")).toBe(written);
  }, 60_000);
});

describe("serve's own words (issue 34, item 10)", () => {
  test("--help names MCPPROXY_CONFIG_PATH; a wrong --transport or MCPPROXY_TRANSPORT names the http alias", async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    const help = await runCli(["serve", "--help"], sandbox.env());
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("MCPPROXY_CONFIG_PATH");
    sandbox.writeConfig({ mcpServers: {} });
    const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    const wrong = await runCli(["serve", "--transport", "htp", ...flags], sandbox.env());
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--transport: must be "stdio", "streamable-http" (or "http") or "sse"');
    const fromEnv = await runCli(["serve", ...flags], sandbox.env({ MCPPROXY_TRANSPORT: "htp" }));
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain(
      'MCPPROXY_TRANSPORT: must be "stdio", "streamable-http" (or "http") or "sse"',
    );
  }, 60_000);
});
