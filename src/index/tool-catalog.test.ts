import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Logger, silentLogger } from "../log.ts";
import { SNAPSHOT_FILE } from "./catalog-index.ts";
import { openToolCatalog } from "./tool-catalog.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-catalog-"));
  dirs.push(dir);
  return dir;
}
/** A catalog whose search index is read at its first need (serve's way), and its debug and warning lines. */
async function openDeferred(dataDir: string) {
  const lines: string[] = [];
  const logger: Logger = {
    ...silentLogger,
    debug: (line) => lines.push(line),
    warn: (line) => lines.push(line),
    child: () => logger,
  };
  const catalog = await openToolCatalog({
    dataDir,
    toolNameLimit: 60,
    reservedNames: new Set(["call_tool"]),
    logger,
    deferIndex: true,
  });
  return { catalog, lines };
}

const open = (dataDir: string) =>
  openToolCatalog({
    dataDir,
    toolNameLimit: 60,
    reservedNames: new Set(["call_tool"]),
    logger: silentLogger,
  });

const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: "object" } });

describe("tool catalog", () => {
  test("a request of several steps gets each step's tool near the top", async () => {
    const catalog = await open(tempDir());
    await catalog.syncServer("search", [
      tool("create_index", "Create a search index with a primary key and searchable attributes"),
      tool("update_index", "Update the primary key and searchable attributes of a search index"),
      tool("delete_index", "Delete a search index and its documents"),
      tool("get_index", "Get a search index: its primary key, attributes and settings"),
      tool("create_index_from_template", "Create a search index from a template, with a primary key"),
      tool(
        "create_index_with_settings",
        "Create a search index with its primary key and searchable attributes",
      ),
      tool("status", "Report the health of the service"),
    ]);
    const request =
      "Create a search index named products with the primary key id and searchable attributes title. Then check its health";
    const names = (await catalog.search(request, 3)).map((hit) => hit.tool.name);
    expect(names[0]).toBe("search__create_index");
    expect(names).toContain("search__status");
    // One step alone: the whole request's ranking, where the wordy step fills the top.
    const oneStep = request.replace(". Then", " and");
    expect(request).not.toBe(oneStep);
    expect((await catalog.search(oneStep, 3)).map((hit) => hit.tool.name)).not.toContain("search__status");
    await catalog.close();
  });

  test("counts added, updated, removed and unchanged tools on each sync", async () => {
    const catalog = await open(tempDir());
    expect(
      await catalog.syncServer("gh", [tool("create_issue", "Create an issue"), tool("list_prs", "List PRs")]),
    ).toEqual({ added: 2, updated: 0, removed: 0, unchanged: 0 });
    expect(
      await catalog.syncServer("gh", [
        tool("create_issue", "Open a new issue"),
        tool("merge_pr", "Merge a PR"),
      ]),
    ).toEqual({ added: 1, updated: 1, removed: 1, unchanged: 0 });
    expect(
      await catalog.syncServer("gh", [
        tool("create_issue", "Open a new issue"),
        tool("merge_pr", "Merge a PR"),
      ]),
    ).toEqual({ added: 0, updated: 0, removed: 0, unchanged: 2 });
    const hits = await catalog.search("open issue", 5);
    expect(hits[0]?.tool.name).toBe("gh__create_issue");
    expect((await catalog.search("list", 5)).map((h) => h.tool.name)).not.toContain("gh__list_prs");
    await catalog.close();
  });

  test("its version moves with a change, not with a server listing or saying the same again", async () => {
    const catalog = await open(tempDir());
    const listed = [tool("create_issue", "Create an issue"), tool("list_prs", "List PRs")];
    const versions = [catalog.version()];
    await catalog.syncServer("gh", listed);
    catalog.instructions?.put("gh", "Issues and pull requests.");
    versions.push(catalog.version());
    // A reconnect of the server: the same tools, the same instructions (a first pass over thousands of servers).
    for (let i = 0; i < 3; i++) {
      await catalog.syncServer("gh", listed);
      expect(catalog.instructions?.put("gh", "Issues and pull requests.")).toBe(false);
    }
    versions.push(catalog.version());
    await catalog.syncServer("gh", [tool("create_issue", "Open a new issue"), listed[1]!]);
    versions.push(catalog.version());
    expect(catalog.instructions?.put("gh", "Issues, pull requests and releases.")).toBe(true);
    versions.push(catalog.version());
    const [empty, first, again, changedTool, changedText] = versions;
    expect(first).not.toBe(empty);
    expect(again).toBe(first);
    expect(changedTool).not.toBe(again);
    expect(changedText).not.toBe(changedTool);
    await catalog.close();
  });

  test("persists across reopen, and rebuilds the search index when the snapshot is damaged", async () => {
    const dir = tempDir();
    const first = await open(dir);
    await first.syncServer("my server", [tool("echo", "Echo back a message")]);
    await first.persist();
    first.close();

    const second = await open(dir);
    expect(second.get("my_server__echo")?.tool).toBe("echo");
    expect((await second.search("echo message", 3))[0]?.tool.server).toBe("my server");
    second.close();

    writeFileSync(join(dir, SNAPSHOT_FILE), "{not json");
    const third = await open(dir);
    expect((await third.search("echo message", 3))[0]?.tool.name).toBe("my_server__echo");
    third.close();
  });

  test("with deferIndex the snapshot is read at the first search, which gets every tool", async () => {
    const dir = tempDir();
    const first = await open(dir);
    await first.syncServer("mail", [tool("send_email", "Send an email message to a recipient")]);
    await first.syncServer("files", [tool("read_file", "Read a file from the disk")]);
    await first.persist();
    await first.close();
    const { catalog: deferred, lines } = await openDeferred(dir);
    // Not read at open: a snapshot damaged now is found by the first search, which rebuilds.
    writeFileSync(join(dir, SNAPSHOT_FILE), "{not json");
    expect(deferred.size()).toBe(2);
    const [mail, files] = await Promise.all([
      deferred.search("send an email", 5),
      deferred.search("read a file", 5),
    ]);
    expect(lines).toContain("rebuilt the search index from the catalog");
    expect(mail.map((hit) => hit.tool.name)).toEqual(["mail__send_email"]);
    expect(files.map((hit) => hit.tool.name)).toEqual(["files__read_file"]);
    await deferred.close();
  });

  test("with deferIndex and no snapshot, tools synced before the first search are indexed once, without a rebuild", async () => {
    const { catalog: deferred, lines } = await openDeferred(tempDir());
    // A first run: nothing saved, so the load builds the index from the catalog, which by then
    // holds the synced tools; the change that waited for the load must not add them twice.
    await deferred.syncServer("files", [tool("read_file", "Read a file from the disk")]);
    await deferred.syncServer("mail", [tool("send_email", "Send an email message to a recipient")]);
    expect((await deferred.search("read a file", 5)).map((hit) => hit.tool.name)).toEqual([
      "files__read_file",
    ]);
    expect((await deferred.search("send an email", 5)).map((hit) => hit.tool.name)).toEqual([
      "mail__send_email",
    ]);
    expect(lines.filter((line) => line.includes("updating the search index failed"))).toEqual([]);
    await deferred.close();
  });

  test("with deferIndex a change made before the load is searched with the snapshot's tools, the snapshot still used", async () => {
    const dir = tempDir();
    const first = await open(dir);
    await first.syncServer("mail", [tool("send_email", "Send an email message to a recipient")]);
    await first.persist();
    await first.close();
    const { catalog: deferred, lines } = await openDeferred(dir);
    const searching = deferred.search("send an email", 5);
    await deferred.syncServer("files", [tool("read_file", "Read a file from the disk")]);
    expect((await searching).map((hit) => hit.tool.name)).toEqual(["mail__send_email"]);
    expect((await deferred.search("read a file", 5)).map((hit) => hit.tool.name)).toEqual([
      "files__read_file",
    ]);
    // The snapshot matched the catalog as it was opened: loaded, not rebuilt, though the catalog moved.
    expect(lines).not.toContain("rebuilt the search index from the catalog");
    await deferred.persist();
    await deferred.close();
    const reopened = await open(dir);
    expect((await reopened.search("read a file", 5)).map((hit) => hit.tool.name)).toEqual([
      "files__read_file",
    ]);
    expect((await reopened.search("send an email", 5)).map((hit) => hit.tool.name)).toEqual([
      "mail__send_email",
    ]);
    await reopened.close();
  });

  test("removes the tools of servers that are no longer configured", async () => {
    const catalog = await open(tempDir());
    await catalog.syncServer("a", [tool("one", "first tool")]);
    await catalog.syncServer("b", [tool("two", "second tool")]);
    expect(await catalog.removeServersExcept(new Set(["b"]))).toMatchObject({ removed: 1 });
    expect(catalog.get("a__one")).toBeUndefined();
    expect((await catalog.search("first tool", 5)).map((h) => h.tool.name)).toEqual(["b__two"]);
    await catalog.close();
  });

  test("keeps the first of two tools with the same name from one server", async () => {
    const catalog = await open(tempDir());
    const counts = await catalog.syncServer("a", [tool("dup", "first"), tool("dup", "second")]);
    expect(counts.added).toBe(1);
    expect(catalog.get("a__dup")?.tool).toBe("dup");
    const [hit] = await catalog.search("dup", 1);
    expect(hit?.definition.description).toBe("first");
    await catalog.close();
  });
});
