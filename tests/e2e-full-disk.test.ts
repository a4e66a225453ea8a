import { describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { cleanupAfterEach, connectStdio, eventually, fixtureEntry, runCli, type Sandbox } from "./helpers.ts";

/**
 * A full disk, made real: a small tmpfs mounted for the test and filled to the last byte. Mounting
 * needs root (or the capability); where it cannot be done the tests are skipped and say why.
 * What must hold: the config's backup is never replaced by a partial one, and the statistics
 * timer logs one line instead of throwing, and saves what it kept once there is room again.
 */
setDefaultTimeout(90_000);
const scope = cleanupAfterEach();

/** Mounts a tmpfs of `size` at a new directory in the sandbox, or says why it cannot. */
function mountSmallDisk(sandbox: Sandbox, size: string): string | { skip: string } {
  if (process.platform !== "linux") return { skip: "a tmpfs mount is Linux's" };
  if (process.getuid?.() !== 0)
    return { skip: "mounting a tmpfs needs root (run the tests as root to cover a full disk)" };
  const disk = join(sandbox.dir, "disk");
  mkdirSync(disk);
  const mount = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${size}`, "tmpfs", disk]);
  if (mount.exitCode !== 0) return { skip: `mount -t tmpfs failed: ${mount.stderr.toString().trim()}` };
  scope.defer(() => {
    Bun.spawnSync(["umount", "-l", disk]);
  });
  return disk;
}

/** Fills the disk to the last byte; returns the filler's path (remove it to make room again). */
function fill(disk: string): string {
  const filler = join(disk, "filler");
  const fd = openSync(filler, "w");
  const chunk = Buffer.alloc(4096, 120);
  try {
    for (;;) writeSync(fd, chunk);
  } catch {
    // ENOSPC: full at 4 KiB; now the last bytes
    try {
      for (;;) writeSync(fd, chunk, 0, 1);
    } catch {
      // full
    }
  } finally {
    closeSync(fd);
  }
  return filler;
}

function skipping(reason: string): void {
  process.stderr.write(`skipped: ${reason}\n`);
}

describe("on a full disk", () => {
  test("an edit of the config fails with a clear error, and the file and its good backup are left whole", async () => {
    const sandbox = scope.sandbox();
    const disk = mountSmallDisk(sandbox, "256k");
    if (typeof disk !== "string") return skipping(disk.skip);
    const configPath = join(disk, "mcp_config.json");
    const flags = ["--config", configPath, "--data-dir", sandbox.dataDir];
    writeFileSync(configPath, JSON.stringify({ mcpServers: { fx: fixtureEntry() } }, null, 2));
    const first = await runCli(
      ["servers", "add", "first", "--url", "http://127.0.0.1:9/mcp", ...flags],
      sandbox.env(),
    );
    expect(first.code).toBe(0);
    const goodBackup = readFileSync(`${configPath}.bak`, "utf8");
    // The person's notes make the file larger than the backup it will replace.
    appendFileSync(configPath, `// ${"notes ".repeat(8_000)}\n`);
    const config = readFileSync(configPath, "utf8");
    const filler = fill(disk);

    const second = await runCli(
      ["servers", "add", "second", "--url", "http://127.0.0.1:9/mcp", ...flags],
      sandbox.env(),
    );
    expect(readFileSync(`${configPath}.bak`, "utf8")).toBe(goodBackup);
    expect(readFileSync(configPath, "utf8")).toBe(config);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(
      /^mcpproxy: Could not write .*mcp_config\.json\.bak .*no space left on device/i,
    );
    expect(second.stderr).toContain("was not changed");
    expect(second.stderr.trim().split("\n")).toHaveLength(1);

    // With room again, the same edit goes through and the backup is the file it replaced.
    rmSync(filler);
    const again = await runCli(
      ["servers", "add", "second", "--url", "http://127.0.0.1:9/mcp", ...flags],
      sandbox.env(),
    );
    expect(again.code).toBe(0);
    expect(readFileSync(`${configPath}.bak`, "utf8")).toBe(config);
  });

  test("serve started on it says the disk is full and what to do, in one line, instead of an unexpected error", async () => {
    const sandbox = scope.sandbox();
    const disk = mountSmallDisk(sandbox, "1m");
    if (typeof disk !== "string") return skipping(disk.skip);
    const onDisk: Sandbox = { ...sandbox, dataDir: join(disk, "data") };
    onDisk.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    const flags = ["--config", onDisk.configPath, "--data-dir", onDisk.dataDir];
    expect((await runCli(["index", ...flags], onDisk.env())).code).toBe(0);
    fill(disk);

    const served = await runCli(["serve", ...flags], onDisk.env());
    expect(served.code).toBe(1);
    expect(served.stderr).toMatch(
      /^mcpproxy: The disk of the data dir .*data is full \(ENOSPC: no space left on device.*\): .*Free some space on it, or give serve another data dir/,
    );
    expect(served.stderr.trim().split("\n")).toHaveLength(1);
  });

  test("the call statistics are not written: one line in the log, no uncaught error, and the counts saved once there is room", async () => {
    const sandbox = scope.sandbox();
    const disk = mountSmallDisk(sandbox, "8m");
    if (typeof disk !== "string") return skipping(disk.skip);
    const onDisk: Sandbox = { ...sandbox, dataDir: join(disk, "data") };
    onDisk.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    const proxy = await connectStdio(onDisk);
    scope.defer(() => proxy.close());
    const echo = () =>
      proxy.client.callTool({
        name: "call_tool",
        arguments: { name: "fx__echo", arguments: { message: "hi" } },
      });
    await echo(); // the proxy is up, its index written
    await eventually(
      () => proxy.stderr(),
      (text) => /servers indexed/.test(text),
      15_000,
    );
    await Bun.sleep(1_500); // the first call is saved
    const filler = fill(disk);

    for (let n = 0; n < 10; n++) await echo();
    const warning = "could not save the call statistics";
    await eventually(
      () => proxy.stderr(),
      (text) => text.includes(warning),
      10_000,
    );
    await Bun.sleep(3_000); // several more flushes fail meanwhile
    expect(proxy.stderr().split(warning)).toHaveLength(2);
    expect(proxy.stderr()).not.toContain("SQLiteError");
    expect(proxy.stderr()).toMatch(
      /could not save the call statistics to .*stats\.db \(.*(full|space).*\); keeping them in memory/i,
    );

    rmSync(filler);
    await eventually(
      () => proxy.stderr(),
      (text) => text.includes("call statistics saved again"),
      10_000,
    );
    for (let n = 0; n < 5; n++) await echo();
    await proxy.close();

    const stats = await runCli(
      ["stats", "--json", "--config", onDisk.configPath, "--data-dir", onDisk.dataDir],
      onDisk.env(),
    );
    expect(stats.code).toBe(0);
    const report = JSON.parse(stats.stdout) as { totals: { calls: number } };
    expect(report.totals.calls).toBe(16);
  });
});
