import { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { join } from "node:path";
import { createPrivateFile } from "../../atomic-file.ts";

/**
 * What keeps two `mcpproxy auth login` runs of one server (two terminals, two scripts) from
 * colliding: a lock per server, held for the whole login, so a second login says that one is
 * running instead of racing it for the callback port and the token file. (Logins of different
 * servers that need the same fixed callback port wait for it in login-flow.ts.)
 *
 * Each is a lock of the operating system held through SQLite, as writer-lock.ts does: taking it is
 * one atomic step and it is released when its process ends, however it ends, so no stale lock is
 * left to judge. They live in `<data dir>/login-locks/`, apart from the token files, which
 * `auth logout` deletes.
 */
export interface LoginLock {
  release(): void;
}

/** Takes the lock named `name` if it is free now; undefined when another login holds it. */
export function tryLoginLock(dataDir: string, name: string): LoginLock | undefined {
  const dir = join(dataDir, "login-locks");
  const path = join(dir, `${name}.db`);
  createPrivateFile(path);
  const db = new Database(path);
  try {
    db.exec("PRAGMA busy_timeout = 0");
    // An empty file gets its one page first (SQLite writes it when it first locks); after that,
    // holding the lock writes nothing.
    if (statSync(path).size === 0) db.exec("PRAGMA user_version = 1");
    db.exec("BEGIN IMMEDIATE");
  } catch (error) {
    db.close();
    if (isBusy(error)) return undefined;
    throw error;
  }
  return {
    release() {
      db.exec("ROLLBACK");
      db.close();
    },
  };
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return (
    (typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))) ||
    /database is locked/i.test(String(error))
  );
}
