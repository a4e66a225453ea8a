import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  cleanupAfterEach,
  eventually,
  FIXTURE,
  fixtureEntry,
  requireBinary,
  runCli,
  startHttpProxy,
  watchOutput,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * What the proxy shows of upstream text (the status page, tools_stat, `mcpproxy stats`,
 * `mcpproxy servers`, /health, upstream_servers) carries no token or password an upstream echoed,
 * and an agent reads the error texts of its own session's calls only. The files the proxy keeps are
 * the user's alone (0600) whatever the umask.
 */
const scope = cleanupAfterEach();

const GITHUB_TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB";
const DB_PASSWORD = "hunter2-db-secret";
const SECRETS = [GITHUB_TOKEN, DB_PASSWORD, "pa55word-in-url", "key-in-query-123"];

function expectNoSecret(text: string) {
  for (const secret of SECRETS) expect(text).not.toContain(secret);
}

async function client(url: URL, name: string) {
  const c = new Client({ name, version: "1" });
  await c.connect(new StreamableHTTPClientTransport(url));
  scope.defer(() => c.close());
  return c;
}

const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");

describe("secrets an upstream echoes", () => {
  test("are redacted on every surface, and another session's errors are not an agent's to read", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: {
        fx: { command: process.execPath, args: [FIXTURE, "--error-tools"] },
        broken: fixtureEntry({
          args: ["--mode", "exit-on-init"],
          env: { FIXTURE_FATAL: `login refused for token ${GITHUB_TOKEN} (db_password=${DB_PASSWORD})` },
        }),
        remote: {
          url: "http://user:pa55word-in-url@127.0.0.1:9/mcp?api_key=key-in-query-123",
          enabled: false,
        },
      },
    });
    const proxy = await startHttpProxy(sandbox);
    scope.defer(() => proxy.stop());
    const a = await client(proxy.url, "session-a");
    const b = await client(proxy.url, "session-b");
    const failed = await a.callTool({
      name: "call_tool",
      arguments: {
        name: "fx__fail_with",
        arguments: { text: `upstream said: token ${GITHUB_TOKEN}, db_password=${DB_PASSWORD}` },
      },
    });
    expect(failed.isError).toBe(true);

    const statOf = async (c: Client) =>
      (await c.callTool({ name: "tools_stat", arguments: {} })).structuredContent as {
        failing: { tool: string; lastError?: string }[];
      };
    const own = (await statOf(a)).failing.find((t) => t.tool === "fail_with");
    expect(own?.lastError).toContain("[REDACTED:");
    expectNoSecret(JSON.stringify(own));
    const other = (await statOf(b)).failing.find((t) => t.tool === "fail_with");
    expect(other).toBeDefined();
    expect(other?.lastError).toBeUndefined();

    await eventually(
      async () =>
        (await (await fetch(new URL("/health", proxy.url))).json()) as {
          servers: { name: string; error?: string }[];
        },
      (health) => Boolean(health.servers.find((s) => s.name === "broken")?.error),
      10_000,
    );
    expectNoSecret(await (await fetch(new URL("/health", proxy.url))).text());
    const listed = await b.callTool({ name: "upstream_servers", arguments: { operation: "list" } });
    expectNoSecret(textOf(listed));
    await Bun.sleep(1_200); // the statistics are written once a second
    const page = await (await fetch(new URL("/", proxy.url))).text();
    expect(page).toContain("fail_with");
    expectNoSecret(page);
    const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    const stats = await runCli(["stats", ...flags], sandbox.env());
    expect(stats.stdout).toContain("fail_with");
    expectNoSecret(stats.stdout);
    const servers = await runCli(["servers", "list", ...flags], sandbox.env());
    expect(servers.stdout).toContain("http://user:***@127.0.0.1:9/mcp?api_key=***");
    expectNoSecret(servers.stdout);
  });
});

describe("the data dir", () => {
  test("every file the proxy writes there is 0600, and its directories 0700, under a umask of 022", async () => {
    const sandbox = scope.sandbox();
    // No --config: the config lives in the data dir, as it does by default.
    const dataDir = join(sandbox.home, ".mcpproxy");
    const env = sandbox.env();
    const umasked = (args: string[]) =>
      Bun.spawn(["sh", "-c", 'umask 022; exec "$@"', "sh", requireBinary(), ...args], {
        env,
        stdout: "pipe",
        stderr: "pipe",
      });
    const run = async (args: string[]) => {
      const child = umasked(args);
      const [stdout, stderr, code] = await Promise.all([
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
        child.exited,
      ]);
      return { stdout, stderr, code };
    };
    expect((await run(["servers", "add", "fx", "--", process.execPath, FIXTURE, "--error-tools"])).code).toBe(
      0,
    );
    expect(
      (await run(["servers", "add", "other", "--", process.execPath, FIXTURE, "--name", "other"])).code,
    ).toBe(0);
    expect((await run(["index"])).code).toBe(0);
    const serve = umasked(["serve", "--transport", "http", "--port", "0"]);
    scope.defer(() => serve.kill());
    const url = await watchOutput(serve.stderr).waitFor(/serving MCP at (http:\/\/\S+?);/, 15_000);
    const c = await client(new URL(url), "perm-test");
    await c.callTool({ name: "call_tool", arguments: { name: "fx__fail_with", arguments: { text: "no" } } });
    await Bun.sleep(1_200);
    serve.kill("SIGTERM");
    await serve.exited;
    expect((await run(["approve", "--all"])).code).toBe(0);

    const files: { path: string; mode: number; isDir: boolean }[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        const stat = statSync(path);
        files.push({ path, mode: stat.mode & 0o777, isDir: stat.isDirectory() });
        if (stat.isDirectory()) walk(path);
      }
    };
    walk(dataDir);
    const names = files.map((file) => file.path.slice(dataDir.length + 1));
    for (const expected of [
      "mcp_config.json",
      "mcp_config.json.bak",
      "catalog.db",
      "search-index.bin",
      "stats.db",
    ])
      expect(names).toContain(expected);
    const open = files.filter((file) => file.mode !== (file.isDir ? 0o700 : 0o600));
    expect(open.map((file) => `${file.path.slice(dataDir.length + 1)} ${file.mode.toString(8)}`)).toEqual([]);
  });
});
