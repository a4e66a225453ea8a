import { Database } from "bun:sqlite";
import { join } from "node:path";
import {
  normalizeValue,
  type RowValues,
  SHARED_TABLES,
  type SharedTable,
  sharedTable,
} from "./catalog-tables.ts";
import { CATALOG_FILE, openCatalogStore } from "./sqlite/catalog-store.ts";

/**
 * A replica's own catalog.db seen as a copy of the shared store. Every write to a shared table, by
 * whatever connection (serve's catalog, `mcpproxy approve`, `mcpproxy index`), is noted in an outbox
 * by triggers kept in the file, so the catalog's code needs no change to be replicated; the
 * replicator pushes the outbox to PostgreSQL. What it pulls from PostgreSQL it writes with the
 * `applying` flag set inside its own transaction: SQLite has one writer at a time, so no other
 * connection's write can fall between setting and clearing it, and nothing pulled is pushed back.
 * The other connections see the pull as another process's commit (data_version), which is how the
 * catalog already learns of approvals made beside it.
 *
 * Rows read from the store may be older than the file: another process on the same data dir (a
 * running serve beside `mcpproxy approve --store`) may write a row and push it after the read began.
 * So a reader takes a mark before it reads (`mark`: the outbox's last sequence number and what was
 * unpushed then), and what it writes leaves alone every row that was unpushed at the mark, is
 * unpushed now, or was written after the mark (pushed rows are remembered a while for this).
 */
/** Where the file's own writes stood when a read of the store began. */
interface LocalMark {
  seq: number;
  pending: ReadonlySet<string>;
}

/** How long a pushed row is remembered: longer than any read of the store takes. */
const KEEP_PUSHED_MS = 10 * 60_000;

interface OutboxEntry {
  seq: number;
  table: SharedTable;
  key: unknown[];
}

export interface LocalCopy {
  /** Unpushed local writes, oldest first. */
  outbox(limit: number): OutboxEntry[];
  /** Forgets the outbox up to `seq` (pushed). */
  pushed(seq: number): void;
  /** Taken before reading the store: what `apply` and `replaceAll` must not overwrite. */
  mark(): LocalMark;
  /** The row with this key now (undefined: deleted). */
  row(table: SharedTable, key: readonly unknown[]): RowValues | undefined;
  rows(table: SharedTable): RowValues[];
  /** True when no shared table holds a row. */
  isEmpty(): boolean;
  /** Writes rows read from the store after `mark` (undefined values: deleted there), but for rows written here since or unpushed. */
  apply(
    changes: readonly { table: SharedTable; key: readonly unknown[]; values: RowValues | undefined }[],
    mark: LocalMark,
  ): number;
  /** Replaces every shared table with the store's rows read after `mark` (start), but for rows written here since or unpushed. */
  replaceAll(tables: ReadonlyMap<SharedTable, RowValues[]>, mark: LocalMark): number;
  /** Notes every row as written, so the next push sends all (seeding an empty store). */
  queueAll(): number;
  close(): void;
}

export function openLocalCopy(dataDir: string): LocalCopy {
  // The catalog's own file and tables first (private, WAL), as a serve opening it makes them: the
  // triggers are made on its tables.
  openCatalogStore(dataDir).close();
  const db = new Database(join(dataDir, CATALOG_FILE));
  db.exec("PRAGMA busy_timeout = 5000");
  installOutbox(db);
  const keyWhere = (table: SharedTable) => table.key.map((column) => `${column} = ?`).join(" AND ");
  const columnList = (table: SharedTable) => table.columns.map(([column]) => column).join(", ");
  const keysOf = (rows: { tbl: string; pk: string }[]) => rows.map((row) => `${row.tbl}\u0000${row.pk}`);
  const pendingKeys = (): Set<string> =>
    new Set(
      keysOf(db.query<{ tbl: string; pk: string }, []>("SELECT DISTINCT tbl, pk FROM store_outbox").all()),
    );
  const lastSeq = () =>
    db.query<{ seq: number }, []>("SELECT seq FROM sqlite_sequence WHERE name = 'store_outbox'").get()?.seq ??
    0;
  /** Inside the write: the rows a read after `mark` may be older than. */
  const keptSince = (mark: LocalMark): Set<string> => {
    const kept = new Set([...mark.pending, ...pendingKeys()]);
    const since = db
      .query<{ tbl: string; pk: string }, [number]>("SELECT tbl, pk FROM store_pushed WHERE seq > ?")
      .all(mark.seq);
    for (const key of keysOf(since)) kept.add(key);
    return kept;
  };
  const keyText = (table: SharedTable, key: readonly unknown[]) =>
    `${table.name}\u0000${JSON.stringify(key)}`;
  const toLocal = (table: SharedTable, values: RowValues) =>
    values.map((value, i) => normalizeValue(value, table.columns[i]?.[1] ?? "text")) as never[];
  const upsert = (table: SharedTable, values: RowValues) =>
    db.run(
      `INSERT OR REPLACE INTO ${table.name} (${columnList(table)}) VALUES (${table.columns.map(() => "?").join(", ")})`,
      toLocal(table, values),
    );
  const remove = (table: SharedTable, key: readonly unknown[]) =>
    db.run(`DELETE FROM ${table.name} WHERE ${keyWhere(table)}`, key as never[]);
  /** Runs `write` as the replicator: the triggers stay quiet, and the index sees a new generation. */
  const asReplicator = db.transaction((mark: LocalMark, write: (kept: Set<string>) => number) => {
    db.run("UPDATE store_sync SET applying = 1");
    const count = write(keptSince(mark));
    if (count > 0)
      db.run(
        `INSERT INTO meta (key, value) VALUES ('generation', '1')
         ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`,
      );
    db.run("UPDATE store_sync SET applying = 0");
    return count;
  }).immediate;
  const rowValues = (table: SharedTable, row: Record<string, unknown>) =>
    table.columns.map(([column, type]) => normalizeValue(row[column], type));

  return {
    outbox(limit) {
      return db
        .query<{ seq: number; tbl: string; pk: string }, [number]>(
          "SELECT seq, tbl, pk FROM store_outbox ORDER BY seq LIMIT ?",
        )
        .all(limit)
        .flatMap((row) => {
          const table = sharedTable(row.tbl);
          return table ? [{ seq: row.seq, table, key: JSON.parse(row.pk) as unknown[] }] : [];
        });
    },
    pushed(seq) {
      const now = Date.now();
      db.transaction(() => {
        db.run("INSERT OR IGNORE INTO store_pushed SELECT seq, tbl, pk, ? FROM store_outbox WHERE seq <= ?", [
          now,
          seq,
        ]);
        db.run("DELETE FROM store_outbox WHERE seq <= ?", [seq]);
        db.run("DELETE FROM store_pushed WHERE at < ?", [now - KEEP_PUSHED_MS]);
      }).immediate();
    },
    mark() {
      // One read transaction: the sequence and the outbox as of the same commit.
      return db.transaction(() => ({ seq: lastSeq(), pending: pendingKeys() })).deferred();
    },
    row(table, key) {
      const row = db
        .query<Record<string, unknown>, never[]>(
          `SELECT ${columnList(table)} FROM ${table.name} WHERE ${keyWhere(table)}`,
        )
        .get(...(key as never[]));
      return row ? rowValues(table, row) : undefined;
    },
    rows(table) {
      return db
        .query<Record<string, unknown>, []>(`SELECT ${columnList(table)} FROM ${table.name}`)
        .all()
        .map((row) => rowValues(table, row));
    },
    isEmpty() {
      return SHARED_TABLES.every((table) => !db.query(`SELECT 1 FROM ${table.name} LIMIT 1`).get());
    },
    apply(changes, mark) {
      return asReplicator(mark, (kept) => {
        let count = 0;
        for (const change of changes) {
          if (kept.has(keyText(change.table, change.key))) continue;
          if (change.values) upsert(change.table, change.values);
          else remove(change.table, change.key);
          count++;
        }
        return count;
      });
    },
    replaceAll(tables, mark) {
      return asReplicator(mark, (kept) => {
        let count = 0;
        for (const [table, rows] of tables) {
          const keep = new Set(rows.map((values) => keyText(table, values.slice(0, table.key.length))));
          // Only the keys: the rows themselves (definitions) may be megabytes.
          const localKeys = db
            .query<Record<string, unknown>, []>(`SELECT ${table.key.join(", ")} FROM ${table.name}`)
            .all()
            .map((row) => table.key.map((column) => String(row[column])));
          for (const key of localKeys) {
            const text = keyText(table, key);
            if (keep.has(text) || kept.has(text)) continue;
            remove(table, key);
            count++;
          }
          for (const values of rows) {
            if (kept.has(keyText(table, values.slice(0, table.key.length)))) continue;
            upsert(table, values);
            count++;
          }
        }
        return count;
      });
    },
    queueAll() {
      let count = 0;
      db.transaction(() => {
        for (const table of SHARED_TABLES) {
          const keys = table.key.join(", ");
          count += db.run(
            `INSERT INTO store_outbox (tbl, pk) SELECT '${table.name}', json_array(${keys}) FROM ${table.name}`,
          ).changes;
        }
      }).immediate();
      return count;
    },
    close: () => db.close(),
  };
}

/** The outbox and its triggers, made once per file (IF NOT EXISTS), on the catalog's tables. */
function installOutbox(db: Database): void {
  db.transaction(() => {
    for (const table of SHARED_TABLES) {
      if (!db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table.name))
        throw new Error(`catalog.db has no ${table.name} table`);
    }
    db.exec(`CREATE TABLE IF NOT EXISTS store_outbox (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, pk TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS store_pushed (
        seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL, pk TEXT NOT NULL, at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS store_sync (applying INTEGER NOT NULL);
      INSERT INTO store_sync (applying) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM store_sync);`);
    for (const table of SHARED_TABLES) {
      const keyOf = (row: "NEW" | "OLD") => `json_array(${table.key.map((c) => `${row}.${c}`).join(", ")})`;
      for (const [event, row] of [
        ["INSERT", "NEW"],
        ["UPDATE", "NEW"],
        ["DELETE", "OLD"],
      ] as const) {
        db.exec(`CREATE TRIGGER IF NOT EXISTS store_outbox_${table.name}_${event.toLowerCase()}
          AFTER ${event} ON ${table.name} WHEN (SELECT applying FROM store_sync) = 0
          BEGIN INSERT INTO store_outbox (tbl, pk) VALUES ('${table.name}', ${keyOf(row)}); END`);
      }
    }
  }).immediate();
}
