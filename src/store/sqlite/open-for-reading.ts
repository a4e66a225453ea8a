import { constants, Database } from "bun:sqlite";
import { existsSync, statSync } from "node:fs";
import { pathToFileURL } from "node:url";

/**
 * A connection that reads. Not SQLite's readonly flag where it can be helped: that connection
 * leaves -wal and -shm files behind, while a normal one that may not write (query_only) removes
 * them at close, and the catalog file is not touched. Where the data dir cannot be written (a
 * read-only mount, a directory of another user) SQLite cannot create the -shm file it reads a WAL
 * database through: `search` then reads the file as immutable, which is exact when no -wal file
 * holds commits (a writer that closed cleanly leaves none), or with the readonly flag when one does.
 */
export function openForReading(path: string, approvalsWritable: boolean): Database {
  const db = new Database(path, { create: false, readwrite: true });
  try {
    if (!approvalsWritable) db.exec("PRAGMA query_only = ON");
    db.exec("PRAGMA busy_timeout = 5000");
    db.query("SELECT 1 FROM sqlite_master LIMIT 1").get(); // the first read opens the WAL
    return db;
  } catch (error) {
    db.close();
    const code = String((error as { code?: unknown }).code ?? "");
    if (approvalsWritable || !/^SQLITE_(READONLY|CANTOPEN)/.test(code)) throw error;
    const wal = `${path}-wal`;
    if (existsSync(wal) && statSync(wal).size > 0) return new Database(path, { readonly: true });
    const uri = `${pathToFileURL(path).href}?immutable=1`;
    return new Database(uri, constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_URI);
  }
}
