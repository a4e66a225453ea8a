import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServerConfig } from "../config/parse-server.ts";
import { openToolCatalog, type ToolCatalog } from "../index/tool-catalog.ts";
import { silentLogger } from "../log.ts";
import { createLook, type DescriptionWatchOptions, startDescriptionWatch } from "./description-watch.ts";

const dirs: string[] = [];
const catalogs: ToolCatalog[] = [];
afterEach(async () => {
  for (const catalog of catalogs.splice(0)) await catalog.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const pin = {
  trustOf: () => "pin" as const,
  quarantinesNew: () => false,
  findingsOf: () => [],
  blockFindings: false,
};
async function open(dataDir: string) {
  const catalog = await openToolCatalog({
    dataDir,
    toolNameLimit: 60,
    reservedNames: new Set(),
    logger: silentLogger,
    approvalPolicy: pin,
  });
  catalogs.push(catalog);
  return catalog;
}
const tool = (name: string, description: string) => ({
  name,
  description,
  inputSchema: { type: "object" as const },
});

/** A catalog with one server, and a look over it that counts how often it reads a server's tools. */
async function watched() {
  const dataDir = mkdtempSync(join(tmpdir(), "mcpproxy-description-watch-"));
  dirs.push(dataDir);
  const catalog = await open(dataDir);
  await catalog.syncServer("git", [tool("push", "Push commits"), tool("status", "Show the status")]);
  let walks = 0;
  const counted: DescriptionWatchOptions["catalog"] = {
    ...catalog,
    names: (server) => {
      walks++;
      return catalog.names(server);
    },
  };
  // One list until the config changes, as the server manager hands it out.
  const servers = [{ name: "git", enabled: true } as ServerConfig];
  const look = createLook({
    catalog: counted,
    servers: () => servers,
    changes: { toolsChanged: () => undefined },
    logger: silentLogger,
  });
  return { dataDir, catalog, look, walks: () => walks };
}

describe("the description's look", () => {
  test("reads no server's tools when nothing moved", async () => {
    const { look, walks } = await watched();
    const first = look();
    const after = walks();
    expect(after).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) expect(look()).toBe(first);
    expect(walks()).toBe(after);
  });

  test("sees a tool changed here and new instructions", async () => {
    const { catalog, look } = await watched();
    const first = look().stamp;
    await catalog.syncServer("git", [tool("push", "Push commits"), tool("status", "Show the status")]);
    expect(look().stamp).toBe(first);
    catalog.instructions?.put("git", "Version control.");
    const instructed = look().stamp;
    expect(instructed).not.toBe(first);
    await catalog.syncServer("git", [
      tool("push", "Push commits and tags"),
      tool("status", "Show the status"),
    ]);
    // The changed tool is quarantined (changed since approved): it leaves the text.
    expect(look().servers[0]?.toolCount).toBe(1);
  });

  test("sees an approval another process gave", async () => {
    const { dataDir, catalog, look } = await watched();
    await catalog.syncServer("git", [
      tool("push", "Push commits and tags"),
      tool("status", "Show the status"),
    ]);
    expect(look().servers[0]?.toolCount).toBe(1);
    const other = await open(dataDir);
    expect(other.approve(other.quarantined())).toBe(1);
    // Approvals are looked for at most every 250 ms (tool-approvals.ts); a look a second later sees them.
    await Bun.sleep(400);
    look();
    expect(look().servers[0]?.toolCount).toBe(2);
  });
});

describe("the description watch", () => {
  /** Three servers, and a watch over them that counts, per server, how often it reads that server's tools. */
  async function watchedServers() {
    const dataDir = mkdtempSync(join(tmpdir(), "mcpproxy-description-watch-"));
    dirs.push(dataDir);
    const catalog = await open(dataDir);
    for (const name of ["git", "files", "search"]) {
      await catalog.syncServer(name, [
        tool("one", `The first of ${name}`),
        tool("two", `The second of ${name}`),
      ]);
    }
    const walks = new Map<string | undefined, number>();
    const counted: DescriptionWatchOptions["catalog"] = {
      ...catalog,
      names: (server) => {
        walks.set(server, (walks.get(server) ?? 0) + 1);
        return catalog.names(server);
      },
    };
    let servers = ["git", "files", "search"].map((name) => ({ name, enabled: true }) as ServerConfig);
    let told = 0;
    // An hour between its own looks: every look below is one asked for (isSettled looks first), none timed.
    const watch = startDescriptionWatch({
      catalog: counted,
      servers: () => servers,
      changes: { toolsChanged: () => told++ },
      logger: silentLogger,
      intervalMs: 3_600_000,
    });
    return {
      catalog,
      counted,
      watch,
      walks: () => Object.fromEntries(walks),
      told: () => told,
      configure: (next: string[]) => {
        servers = next.map((name) => ({ name, enabled: true }) as ServerConfig);
      },
    };
  }

  test("walks the servers once per move of the catalog's version or the server list, never while neither moves", async () => {
    const { catalog, counted, watch, walks, told, configure } = await watchedServers();
    try {
      expect(watch.current(counted)).toContain("git");
      expect(walks()).toEqual({ git: 1, files: 1, search: 1 });
      for (let i = 0; i < 20; i++) expect(watch.isSettled()).toBe(true);
      expect(walks()).toEqual({ git: 1, files: 1, search: 1 });

      // A sync that changes nothing (a reconnect listing the same) leaves the version: no walk.
      await catalog.syncServer("git", [tool("one", "The first of git"), tool("two", "The second of git")]);
      for (let i = 0; i < 20; i++) watch.isSettled();
      expect(walks()).toEqual({ git: 1, files: 1, search: 1 });
      // A sync that changes a tool moves it: one walk, then none again.
      await catalog.syncServer("git", [
        tool("one", "The first of git, renewed"),
        tool("two", "The second of git"),
      ]);
      for (let i = 0; i < 20; i++) watch.isSettled();
      expect(walks()).toEqual({ git: 2, files: 2, search: 2 });

      // New instructions move it too.
      catalog.instructions?.put("files", "Reads and writes files.");
      for (let i = 0; i < 20; i++) expect(watch.isSettled()).toBe(false);
      expect(walks()).toEqual({ git: 3, files: 3, search: 3 });

      // A config change hands out a new list: one walk, of the servers it names.
      configure(["git", "search"]);
      for (let i = 0; i < 20; i++) watch.isSettled();
      expect(walks()).toEqual({ git: 4, files: 3, search: 4 });
      expect(told()).toBe(0);
    } finally {
      watch.stop();
    }
  });
});
