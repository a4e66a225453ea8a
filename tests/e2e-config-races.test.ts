import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { parse } from "jsonc-parser";
import {
  cleanupAfterEach,
  connectHttp,
  connectStdio,
  requireBinary,
  runCli,
  type Sandbox,
  startHttpProxy,
  watchOutput,
} from "./helpers.ts";

/**
 * The config file edited from several places at once, through the compiled binary: agents through
 * `upstream_servers` (two clients of one proxy, two proxies on one file), `mcpproxy servers`, and a
 * person saving the file in an editor. Every change that was acknowledged, and every hand edit,
 * must be in the file at the end. And a writer killed in the middle leaves nothing behind that the
 * next run keeps or reads.
 */
setDefaultTimeout(180_000);
const scope = cleanupAfterEach();

type Servers = Record<string, Record<string, unknown>>;
const serversIn = (sandbox: Sandbox): Servers =>
  (
    parse(readFileSync(sandbox.configPath, "utf8"), [], { allowTrailingComma: true }) as {
      mcpServers: Servers;
    }
  ).mcpServers;

/** A server that never starts: a person's entry, disabled, so updates are only file edits. */
const idle = { url: "http://127.0.0.1:9/mcp", enabled: false };

async function update(client: Client, server: Record<string, unknown>) {
  const result = await client.callTool(
    { name: "upstream_servers", arguments: { operation: "update", name: "shared", server } },
    CallToolResultSchema,
    { timeout: 60_000 },
  );
  return !result.isError;
}

describe("concurrent edits of the config file", () => {
  test("two clients of one proxy updating one entry at once, 20 rounds: both changes of every round are kept", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { shared: idle } });
    const proxy = await startHttpProxy(sandbox);
    scope.defer(() => proxy.stop());
    const [a, b] = [await connectHttp(proxy.url), await connectHttp(proxy.url)];
    scope.defer(
      () => a.close(),
      () => b.close(),
    );
    const lost: string[] = [];
    for (let round = 1; round <= 20; round++) {
      const [okA, okB] = await Promise.all([
        update(a, { timeoutMs: 10_000 + round }),
        update(b, { callTimeoutMs: 20_000 + round }),
      ]);
      expect([okA, okB]).toEqual([true, true]);
      const entry = serversIn(sandbox).shared!;
      if (entry.timeoutMs !== 10_000 + round) lost.push(`round ${round}: timeoutMs`);
      if (entry.callTimeoutMs !== 20_000 + round) lost.push(`round ${round}: callTimeoutMs`);
    }
    expect(lost).toEqual([]);
  });

  test("two proxies and `mcpproxy servers add` on one file at once, 12 rounds: every acknowledged change is kept", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { shared: idle } });
    const first = await connectStdio(sandbox);
    scope.defer(() => first.close());
    // A second proxy of its own data dir, on the same config file.
    const second = await connectStdio({ ...sandbox, dataDir: join(sandbox.dir, "data-2") });
    scope.defer(() => second.close());
    const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    const lost: string[] = [];
    for (let round = 1; round <= 12; round++) {
      const [okA, okB, added] = await Promise.all([
        update(first.client, { timeoutMs: 10_000 + round }),
        update(second.client, { callTimeoutMs: 20_000 + round }),
        runCli(
          ["servers", "add", `cli-${round}`, "--url", "http://127.0.0.1:9/mcp", ...flags],
          sandbox.env(),
        ),
      ]);
      expect([okA, okB, added.code]).toEqual([true, true, 0]);
      const servers = serversIn(sandbox);
      if (servers.shared!.timeoutMs !== 10_000 + round) lost.push(`round ${round}: timeoutMs`);
      if (servers.shared!.callTimeoutMs !== 20_000 + round) lost.push(`round ${round}: callTimeoutMs`);
      for (let earlier = 1; earlier <= round; earlier++) {
        if (!servers[`cli-${earlier}`]) lost.push(`round ${round}: cli-${earlier}`);
      }
    }
    expect(lost).toEqual([]);
  });

  // The careful editor of the fixture swaps its file in with renameat2, which is Linux's.
  test.skipIf(process.platform !== "linux")(
    "an agent adding servers while a person saves the file in an editor, 60 each: no acknowledged add and no hand edit is lost",
    async () => {
      const sandbox = scope.sandbox();
      // Some bulk, as a config with comments and many servers has: an edit is not instantaneous.
      const padding = `// ${"notes about my servers ".repeat(8_000)}\n`;
      writeFileSync(
        sandbox.configPath,
        `${padding}{\n  "mcpServers": {\n    "first": { "command": "hand-edit", "enabled": false }\n  }\n}\n`,
      );
      const proxy = await connectStdio(sandbox);
      scope.defer(() => proxy.close());
      const editor = Bun.spawn(
        [
          process.execPath,
          join(import.meta.dir, "fixtures", "editor-writer.ts"),
          sandbox.configPath,
          "60",
          "hand",
        ],
        { stdout: "pipe", stderr: "inherit" },
      );
      const editorOutput = watchOutput(editor.stdout);
      const acknowledged: string[] = [];
      for (let n = 0; n < 60; n++) {
        const result = await proxy.client.callTool(
          {
            name: "upstream_servers",
            arguments: { operation: "add", name: `agent-${n}`, server: { url: "http://127.0.0.1:9/mcp" } },
          },
          CallToolResultSchema,
          { timeout: 60_000 },
        );
        if (!result.isError) acknowledged.push(`agent-${n}`);
        await Bun.sleep(Math.random() * 20);
      }
      expect(await editor.exited).toBe(0);
      await editorOutput.done;
      expect(JSON.parse(editorOutput.text())).toMatchObject({ saved: 60 });
      expect(acknowledged).toHaveLength(60);
      const servers = serversIn(sandbox);
      const missing = [
        ...acknowledged.filter((name) => !servers[name]),
        ...Array.from({ length: 60 }, (_, n) => `hand-${n}`).filter((name) => !servers[name]),
      ];
      expect(missing).toEqual([]);
      expect(readFileSync(sandbox.configPath, "utf8").startsWith(padding)).toBe(true);
      expect(readdirSync(sandbox.dir).filter((name) => name.includes(".conflict-"))).toEqual([]);
    },
  );
});

describe("a writer killed in the middle of an edit", () => {
  const isTemp = (name: string) => /^mcp_config\.json\..*\.tmp$/.test(name);
  const temps = (sandbox: Sandbox) => readdirSync(sandbox.dir).filter(isTemp);

  /** Starts `servers add` and kills it (-9) the moment its temp file appears; resolves to whether it did. */
  async function killMidWrite(sandbox: Sandbox, name: string): Promise<boolean> {
    const before = new Set(temps(sandbox));
    const child = Bun.spawn(
      [
        requireBinary(),
        "servers",
        "add",
        name,
        "--url",
        "http://127.0.0.1:9/mcp",
        "--config",
        sandbox.configPath,
        "--data-dir",
        sandbox.dataDir,
      ],
      { env: sandbox.env(), stdout: "ignore", stderr: "ignore" },
    );
    let killed = false;
    const deadline = Date.now() + 20_000;
    // A tight, synchronous watch: the temp lives for a few milliseconds only.
    while (child.exitCode === null && Date.now() < deadline) {
      if (temps(sandbox).some((temp) => !before.has(temp))) {
        child.kill("SIGKILL");
        killed = true;
        break;
      }
    }
    await child.exited;
    return killed;
  }

  test("leaves no temp file once the next edit or the next serve has run, and none is ever read as config", async () => {
    const sandbox = scope.sandbox();
    // Large enough that writing it takes a while: the kills land while a temp file exists.
    const padding = `// ${"x".repeat(8 * 1024 * 1024)}\n`;
    writeFileSync(
      sandbox.configPath,
      `${padding}{ "mcpServers": { "first": { "url": "http://127.0.0.1:9/mcp" } } }\n`,
    );
    const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];

    // A kill counts when it left a temp behind: on a loaded machine the rename can still land
    // between seeing the temp and the SIGKILL.
    let killedMidWrite = 0;
    for (let round = 0; round < 16 && killedMidWrite < 3; round++) {
      if ((await killMidWrite(sandbox, `killed-${round}`)) && temps(sandbox).length > 0) killedMidWrite++;
    }
    expect(killedMidWrite).toBeGreaterThan(0);
    expect(temps(sandbox).length).toBeGreaterThan(0); // what the kills left
    // The file read as config is whole: the original or a finished edit, never a temp.
    const listed = await runCli(["servers", "list", "--json", ...flags], sandbox.env());
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).servers.map((s: { name: string }) => s.name)).toContain("first");

    // The next edit clears them.
    const added = await runCli(
      ["servers", "add", "after", "--url", "http://127.0.0.1:9/mcp", ...flags],
      sandbox.env(),
    );
    expect(added.code).toBe(0);
    expect(temps(sandbox)).toEqual([]);

    // And so does the next serve.
    for (let round = 0; round < 8 && temps(sandbox).length === 0; round++) {
      await killMidWrite(sandbox, `killed-again-${round}`);
    }
    expect(temps(sandbox).length).toBeGreaterThan(0);
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    await proxy.client.listTools();
    expect(temps(sandbox)).toEqual([]);
    expect(serversIn(sandbox).after).toBeDefined();
  });
});
