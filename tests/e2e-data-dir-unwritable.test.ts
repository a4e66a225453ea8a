import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  cleanupAfterEach,
  connectStdio,
  FIXTURE_TOOLS,
  fixtureEntry,
  retrieve,
  runCli,
  type Sandbox,
  startHttpProxy,
} from "./helpers.ts";

/**
 * `serve` on a data dir it cannot write: a read-only file system, made real as a small tmpfs
 * filled first (the saved index, a token) and then remounted read-only (EROFS for root too, as a
 * read-only mount is; file modes do not stop root). Serve says so once and serves from the saved
 * index, keeping what its servers list in memory, with no statistics and nothing written. Mounting
 * needs root (or the capability); where it cannot be done the tests are skipped and say why.
 */
setDefaultTimeout(90_000);
const scope = cleanupAfterEach();

/** A tmpfs at a new directory in the sandbox, or why it cannot be mounted. */
function mountDisk(sandbox: Sandbox): string | { skip: string } {
  if (process.platform !== "linux") return { skip: "a tmpfs mount is Linux's" };
  if (process.getuid?.() !== 0) return { skip: "mounting a tmpfs needs root" };
  const disk = join(sandbox.dir, "disk");
  mkdirSync(disk);
  const mount = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", disk]);
  if (mount.exitCode !== 0) return { skip: `mount -t tmpfs failed: ${mount.stderr.toString().trim()}` };
  scope.defer(() => {
    Bun.spawnSync(["umount", "-l", disk]);
  });
  return disk;
}

function remountReadOnly(disk: string): void {
  const remount = Bun.spawnSync(["mount", "-o", "remount,ro", disk]);
  expect(remount.exitCode).toBe(0);
}

/** Every file under a dir with its size and modification time: what "nothing written" compares. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .sort()
    .map((name) => {
      const stat = statSync(join(dir, name));
      return `${name} ${stat.size} ${stat.mtimeMs}`;
    });
}

function skipping(reason: string): void {
  process.stderr.write(`skipped: ${reason}\n`);
}

const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");

describe("serve on a read-only data dir", () => {
  test("says so once and serves the saved index; calls work, nothing is written there", async () => {
    const sandbox = scope.sandbox();
    const disk = mountDisk(sandbox);
    if (typeof disk !== "string") return skipping(disk.skip);
    const onDisk: Sandbox = { ...sandbox, dataDir: join(disk, "data") };
    onDisk.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    const flags = ["--config", onDisk.configPath, "--data-dir", onDisk.dataDir];
    expect((await runCli(["index", ...flags], onDisk.env())).code).toBe(0);
    remountReadOnly(disk);
    const before = snapshot(disk);

    const proxy = await connectStdio(onDisk);
    scope.defer(() => proxy.close());
    const found = await retrieve(proxy.client, "echo back the message");
    expect(found.tools[0]?.name).toBe("fx__echo");
    const echoed = await proxy.client.callTool({
      name: "call_tool",
      arguments: { name: "fx__echo", arguments: { message: "hi" } },
    });
    expect(textOf(echoed)).toBe("fixture echo: hi");
    await proxy.close();

    const log = proxy.stderr();
    expect(log).toContain(`the data dir ${onDisk.dataDir} cannot be written (EROFS: read-only file system`);
    expect(log).toContain("serving without writing to it");
    expect(log.split("cannot be written")).toHaveLength(2);
    expect(log).not.toContain("unexpected error");
    expect(log).not.toMatch(/SQLiteError|ERROR/);
    expect(snapshot(disk)).toEqual(before);
  });

  test("with nothing saved (its data dir not made yet): the servers are indexed in memory", async () => {
    const sandbox = scope.sandbox();
    const disk = mountDisk(sandbox);
    if (typeof disk !== "string") return skipping(disk.skip);
    remountReadOnly(disk);
    const onDisk: Sandbox = { ...sandbox, dataDir: join(disk, "data") };
    onDisk.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    const proxy = await connectStdio(onDisk);
    scope.defer(() => proxy.close());
    const found = await retrieve(proxy.client, "echo back the message");
    expect(found.tools[0]?.name).toBe("fx__echo");
    const listed = await proxy.client.callTool({
      name: "upstream_servers",
      arguments: { operation: "list" },
    });
    const servers = (listed.structuredContent as { servers: { name: string; tools: number }[] }).servers;
    expect(servers).toEqual([expect.objectContaining({ name: "fx", tools: FIXTURE_TOOLS })]);
    await proxy.close();
    expect(proxy.stderr()).toContain("cannot be written (EROFS");
    expect(readdirSync(disk)).toEqual([]);
  });

  test("over HTTP: the token already there is used; without one, serve says where it must be", async () => {
    const sandbox = scope.sandbox();
    const disk = mountDisk(sandbox);
    if (typeof disk !== "string") return skipping(disk.skip);
    const withToken: Sandbox = { ...sandbox, dataDir: join(disk, "with-token") };
    const token = "a".repeat(64);
    mkdirSync(withToken.dataDir);
    writeFileSync(join(withToken.dataDir, "http-token"), `${token}\n`, { mode: 0o600 });
    remountReadOnly(disk);
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });

    const proxy = await startHttpProxy(withToken, [], { MCPPROXY_REQUIRE_TOKEN: "1" });
    scope.defer(() => proxy.stop());
    expect((await fetch(proxy.url, { method: "POST" })).status).toBe(401);
    const health = await fetch(new URL("/health", proxy.url), {
      headers: { authorization: `Bearer ${token}` },
    });
    // 503 until its servers are up: the token was taken either way.
    expect([200, 503]).toContain(health.status);
    expect(((await health.json()) as { servers: { name: string }[] }).servers[0]?.name).toBe("fx");

    const without = await runCli(
      ["serve", "--transport", "http", "--port", "0", "--config", sandbox.configPath],
      sandbox.env({ MCPPROXY_DATA_DIR: join(disk, "none"), MCPPROXY_REQUIRE_TOKEN: "1" }),
    );
    expect(without.code).toBe(1);
    expect(without.stderr).toContain(
      `mcpproxy: The HTTP listener needs a bearer token, kept in ${join(disk, "none", "http-token")}`,
    );
    expect(without.stderr).not.toContain("unexpected error");
  });

  test("a replica of a shared store is refused at once: its copy of the catalog lives there", async () => {
    const sandbox = scope.sandbox();
    const disk = mountDisk(sandbox);
    if (typeof disk !== "string") return skipping(disk.skip);
    remountReadOnly(disk);
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    const served = await runCli(
      [
        ...["serve", "--config", sandbox.configPath, "--data-dir", join(disk, "data")],
        ...["--store", "postgres://mcpproxy@127.0.0.1:9/none"],
      ],
      sandbox.env({ MCPPROXY_STORE_KEY: "b".repeat(64) }),
    );
    expect(served.code).toBe(1);
    expect(served.stderr).toMatch(
      /^mcpproxy: The data dir .* cannot be written \(EROFS.*a replica of a shared store/,
    );
  });
});

describe("serve on a data dir it cannot make", () => {
  test("a path through a file: one line that says so, not an unexpected error", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    const file = join(sandbox.dir, "a-file");
    writeFileSync(file, "not a directory\n");
    const served = await runCli(
      ["serve", "--config", sandbox.configPath, "--data-dir", join(file, "data")],
      sandbox.env(),
    );
    expect(served.code).toBe(1);
    expect(served.stderr).toMatch(/^mcpproxy: The data dir .*a-file\/data cannot be made: ENOTDIR/);
    expect(served.stderr).toContain("Give serve a directory");
  });
});
