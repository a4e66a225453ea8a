import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RowValues, type SharedTable, sharedTable } from "./catalog-tables.ts";
import { type LocalCopy, openLocalCopy } from "./local-copy.ts";
import { CATALOG_FILE } from "./sqlite/catalog-store.ts";

/**
 * A data dir's catalog.db as a copy of the shared store, with two processes on it: a running serve
 * (its replica pushes what it writes) and `mcpproxy approve --store`, which pulls the store's rows
 * into the same file. Rows read from the store before the serve pushed its write must not undo it.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-local-copy-"));
  dirs.push(dir);
  return dir;
}

const tools = sharedTable("tools") as SharedTable;
const toolRow = (tool: string, hash: string): RowValues => ["second", tool, `second__${tool}`, hash, "{}", 1];

/** What another process's catalog does: a plain write on its own connection (the triggers note it). */
function writeTool(dir: string, tool: string, hash: string): void {
  const db = new Database(join(dir, CATALOG_FILE));
  db.exec("PRAGMA busy_timeout = 5000");
  db.run(
    "INSERT OR REPLACE INTO tools (server, tool, name, hash, definition, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
    toolRow(tool, hash) as never[],
  );
  db.close();
}

/** That process's replica pushing its whole outbox (the store now has the rows). */
function pushAll(copy: LocalCopy): void {
  const entries = copy.outbox(1_000);
  copy.pushed(entries.at(-1)?.seq ?? 0);
}

const hashOf = (copy: LocalCopy, tool: string) => copy.row(tools, ["second", tool])?.[3];

describe("a local copy pulled while another process writes the same file", () => {
  test("a row written and pushed after the mark is kept when the store's older rows are applied", () => {
    const dir = dataDir();
    const serve = openLocalCopy(dir);
    const approve = openLocalCopy(dir);
    try {
      writeTool(dir, "before", "h0");
      pushAll(serve);
      const mark = approve.mark();
      // The store was read here: it has "before" only. Then the serve lists a new tool and pushes it.
      writeTool(dir, "echo", "h1");
      pushAll(serve);
      expect(serve.outbox(10)).toEqual([]);
      approve.replaceAll(new Map([[tools, [toolRow("before", "h0")]]]), mark);
      expect(hashOf(approve, "echo")).toBe("h1");
      expect(hashOf(approve, "before")).toBe("h0");
      // A change notice read before the serve's next write does not overwrite it either.
      const noticeMark = approve.mark();
      writeTool(dir, "echo", "h2");
      pushAll(serve);
      approve.apply([{ table: tools, key: ["second", "echo"], values: toolRow("echo", "h1") }], noticeMark);
      expect(hashOf(approve, "echo")).toBe("h2");
    } finally {
      serve.close();
      approve.close();
    }
  });

  test("a row pushed before the mark and gone from the store is removed; one unpushed is kept", () => {
    const dir = dataDir();
    const copy = openLocalCopy(dir);
    try {
      writeTool(dir, "deleted_elsewhere", "h0");
      pushAll(copy);
      writeTool(dir, "not_pushed_yet", "h1");
      const mark = copy.mark();
      copy.replaceAll(new Map([[tools, []]]), mark);
      expect(hashOf(copy, "deleted_elsewhere")).toBeUndefined();
      expect(hashOf(copy, "not_pushed_yet")).toBe("h1");
      // And a newer row from the store replaces one that was pushed before the mark.
      writeTool(dir, "stale", "old");
      pushAll(copy);
      const next = copy.mark();
      copy.apply([{ table: tools, key: ["second", "stale"], values: toolRow("stale", "new") }], next);
      expect(hashOf(copy, "stale")).toBe("new");
    } finally {
      copy.close();
    }
  });

  test("beside a process that keeps writing, opening, pulling and pushing wait their turn instead of failing with `database is locked`", async () => {
    const dir = dataDir();
    openLocalCopy(dir).close();
    // Short write transactions one after another, as a busy serve's catalog makes them: a deferred
    // transaction that read before it wrote found the file changed and failed at once.
    const writer = Bun.spawn(
      [
        process.execPath,
        "-e",
        `const { Database } = require("bun:sqlite");
         const db = new Database(${JSON.stringify(join(dir, CATALOG_FILE))});
         db.exec("PRAGMA busy_timeout = 5000");
         console.log("writing");
         let i = 0;
         for (const end = Date.now() + 2500; Date.now() < end; ) {
           db.exec("BEGIN IMMEDIATE");
           db.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('busy', ?)", [String(i++)]);
           for (const t = Date.now() + 5; Date.now() < t; );
           db.exec("COMMIT");
         }`,
      ],
      { stdout: "pipe", stderr: "inherit" },
    );
    const started = await writer.stdout.getReader().read();
    expect(new TextDecoder().decode(started.value)).toContain("writing");
    let rounds = 0;
    while (writer.exitCode === null) {
      const copy = openLocalCopy(dir);
      try {
        const mark = copy.mark();
        copy.replaceAll(new Map([[tools, [toolRow("echo", `h${rounds}`)]]]), mark);
        writeTool(dir, "local", `l${rounds}`);
        pushAll(copy);
        expect(hashOf(copy, "echo")).toBe(`h${rounds}`);
      } finally {
        copy.close();
      }
      rounds++;
      await Bun.sleep(1); // lets the child's exit be seen
    }
    expect(await writer.exited).toBe(0);
    expect(rounds).toBeGreaterThan(0);
  }, 30_000);
});
