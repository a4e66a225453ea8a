import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../src/log.ts";
import { openLocalCopy } from "../src/store/local-copy.ts";
import { type CatalogReplica, startCatalogReplica } from "../src/store/postgres/catalog-replica.ts";
import { openSharedStore, type SharedStore } from "../src/store/shared-store.ts";
import { CATALOG_FILE, openCatalogStore } from "../src/store/sqlite/catalog-store.ts";
import { eventually } from "./helpers.ts";
import { freshDatabase, onDatabase } from "./support/store-databases.ts";
import {
  POSTGRES_MISSING,
  postgresBinDir,
  startTempPostgres,
  type TempPostgres,
} from "./support/temp-postgres.ts";

setDefaultTimeout(60_000);

/**
 * The catalog copy between two replicas' catalog.db files and the store, in process: a write to one
 * file (by any connection, as serve's catalog or `approve` make them) reaches the store and the other
 * file, deletes too, in batches larger than one read; an empty store is seeded from a data dir.
 */
const hasPostgres = postgresBinDir() !== undefined;
if (!hasPostgres) process.stderr.write(POSTGRES_MISSING);

const env = { MCPPROXY_STORE_KEY: "a".repeat(64) };
let pg: TempPostgres;
const cleanups: (() => unknown)[] = [];
beforeAll(async () => {
  if (hasPostgres) pg = await startTempPostgres();
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await pg?.cleanup();
}, 30_000);

interface Side {
  dir: string;
  store: SharedStore;
  replica: CatalogReplica;
  /** A connection of the kind serve's catalog holds: its writes go through the triggers. */
  app: Database;
}

async function side(url: string, seed?: (db: Database) => void): Promise<Side> {
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-copy-"));
  openCatalogStore(dir).close();
  const app = new Database(join(dir, CATALOG_FILE));
  app.exec("PRAGMA busy_timeout = 5000");
  // Written before the copy's triggers exist: what a data dir of one machine holds.
  seed?.(app);
  const store = await openSharedStore({ url, shown: url, env, logger: silentLogger });
  const copy = openLocalCopy(dir);
  const replica = await startCatalogReplica(store, copy, silentLogger);
  cleanups.push(async () => {
    await replica.stop();
    copy.close();
    app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, store, replica, app };
}

const approve = (db: Database, server: string, tool: string, hash: string) =>
  db.run(
    "INSERT OR REPLACE INTO approvals (server, tool, hash, definition, approved_at) VALUES (?, ?, ?, NULL, ?)",
    [server, tool, hash, Date.now()],
  );
const hashOf = (db: Database, server: string, tool: string) =>
  db
    .query<{ hash: string }, [string, string]>("SELECT hash FROM approvals WHERE server = ? AND tool = ?")
    .get(server, tool)?.hash;

describe.skipIf(!hasPostgres)("the catalog copied between replicas", () => {
  test("a write on one replica reaches the store and the other replica; a delete too", async () => {
    const url = await freshDatabase(pg);
    const a = await side(url);
    const b = await side(url);
    approve(a.app, "github", "create_issue", "h1");
    await a.replica.push();
    expect(
      await eventually(
        () => hashOf(b.app, "github", "create_issue"),
        (hash) => hash === "h1",
        5_000,
      ),
    ).toBe("h1");
    const inStore = await onDatabase(url, (sql) => sql`SELECT hash FROM mcpproxy.approvals`);
    expect(inStore.map((row) => row.hash)).toEqual(["h1"]);
    // What was pulled is not pushed back: B's outbox stays empty.
    expect(b.app.query("SELECT count(*) AS n FROM store_outbox").get()).toEqual({ n: 0 });

    a.app.run("DELETE FROM approvals WHERE server = 'github'");
    await a.replica.push();
    expect(
      await eventually(
        () => hashOf(b.app, "github", "create_issue"),
        (hash) => hash === undefined,
        5_000,
      ),
    ).toBeUndefined();
  });

  test("a batch of hundreds of rows arrives whole, in one change", async () => {
    const url = await freshDatabase(pg);
    const a = await side(url);
    const b = await side(url);
    a.app.transaction(() => {
      for (let i = 0; i < 450; i++) approve(a.app, `s${i % 7}`, `tool_${i}`, `h${i}`);
    })();
    expect(await a.replica.push()).toBe(450);
    const count = () => (b.app.query("SELECT count(*) AS n FROM approvals").get() as { n: number }).n;
    expect(await eventually(count, (n) => n === 450, 10_000)).toBe(450);
    expect(hashOf(b.app, "s3", "tool_444")).toBe("h444");
  });

  test("an empty store is seeded from a data dir that holds a catalog, and a new replica starts from it", async () => {
    const url = await freshDatabase(pg);
    await side(url, (db) => approve(db, "memory", "remember", "hm"));
    const inStore = await onDatabase(url, (sql) => sql`SELECT server, tool, hash FROM mcpproxy.approvals`);
    expect([...inStore]).toEqual([{ server: "memory", tool: "remember", hash: "hm" }]);
    // A replica whose data dir holds something else starts from the store's catalog instead.
    const other = await side(url, (db) => approve(db, "stale", "gone", "hs"));
    expect(hashOf(other.app, "memory", "remember")).toBe("hm");
    expect(hashOf(other.app, "stale", "gone")).toBeUndefined();
  });
});
