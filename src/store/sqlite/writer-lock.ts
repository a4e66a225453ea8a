import { Database } from "bun:sqlite";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createPrivateFile, writeFileAtomicSync } from "../../atomic-file.ts";

/**
 * One writer per data dir. Two proxies that both write the catalog and the saved index would each
 * stamp a snapshot of their own view with the other's generation.
 *
 * The lock is a lock of the operating system, held on `writer-lock.db` through SQLite (an open
 * `BEGIN IMMEDIATE` that is never committed; nothing is written to the file): taking it is one
 * atomic step, and the kernel drops it when its process ends, however it ends. There is no stale
 * lock to take over. (A pid file taken over when its process was gone let two `index` runs that
 * found the same stale file both become writers.)
 *
 * `writer.lock` says who holds it (`PID ROLE`), written by the holder once it holds the lock, for
 * the messages of the others and for `index`, which asks a `serve` that holds it to re-index
 * instead of failing (index-requests.ts) and waits for another `index` to finish.
 */
const LOCK_FILE = "writer-lock.db";
const HOLDER_FILE = "writer.lock";

/** What the holder is: a `serve` keeps the lock for its life, an `index` run until it ends. */
export type WriterRole = "serve" | "index";

/**
 * The same kind of lock, for the background service (src/service/): one service per data dir,
 * held for its life, so that two started at once cannot both choose a port and listen.
 */
export function acquireServiceLock(dataDir: string): WriterLock {
  const lock = openLock(join(dataDir, "service-lock.db"), join(dataDir, "service.lock"), "service");
  lock.tryAcquire();
  return lock;
}

interface LockHolder {
  pid: number;
  /** Absent in a `writer.lock` left by an mcpproxy before roles were recorded. */
  role?: WriterRole | undefined;
}

export interface WriterLock {
  /** True while this process may write the catalog. */
  readonly isHeld: boolean;
  /** Takes the lock if it is free now (never waits); true when this process holds it. */
  tryAcquire(): boolean;
  /** Who holds it, as its `writer.lock` says; undefined when that names no live process. */
  holder(): LockHolder | undefined;
  release(): void;
}

/** Opens the data dir's lock (the dir must exist) and tries to take it once. */
export function acquireWriterLock(dataDir: string, role: WriterRole): WriterLock {
  const lock = openWriterLock(dataDir, role);
  lock.tryAcquire();
  return lock;
}

export function openWriterLock(dataDir: string, role: WriterRole): WriterLock {
  return openLock(join(dataDir, LOCK_FILE), join(dataDir, HOLDER_FILE), role);
}

function openLock(path: string, holderPath: string, role: WriterRole | "service"): WriterLock {
  createPrivateFile(path);
  // One connection for the life of the lock: POSIX locks belong to the process, and closing any
  // other descriptor of the file would drop them.
  let db: Database | undefined = new Database(path);
  db.exec("PRAGMA busy_timeout = 0");
  let isHeld = false;
  return {
    get isHeld() {
      return isHeld;
    },
    tryAcquire() {
      if (isHeld) return true;
      if (!db) return false;
      try {
        db.exec("BEGIN IMMEDIATE");
      } catch (error) {
        if ((error as { code?: string }).code?.startsWith("SQLITE_BUSY")) return false;
        throw error;
      }
      isHeld = true;
      writeFileAtomicSync(holderPath, `${process.pid} ${role}\n`);
      return true;
    },
    holder() {
      const holder = holderOf(holderPath);
      return holder && holder.pid !== process.pid && isAlive(holder.pid) ? holder : undefined;
    },
    release() {
      if (!db) return;
      // The holder file first: once the lock is free, the next holder writes its own.
      if (isHeld && holderOf(holderPath)?.pid === process.pid) rmSync(holderPath, { force: true });
      if (isHeld) db.exec("ROLLBACK");
      db.close();
      db = undefined;
      isHeld = false;
    },
  };
}

/**
 * The lock of a data dir that cannot be written (a read-only mount): never held, so the catalog is
 * opened for reading and nothing is written there; no file is made.
 */
export function unwritableDirLock(): WriterLock {
  return {
    isHeld: false,
    tryAcquire: () => false,
    holder: () => undefined,
    release: () => {},
  };
}

function holderOf(path: string): LockHolder | undefined {
  try {
    const [pidText, role] = readFileSync(path, "utf8").trim().split(/\s+/);
    const pid = Number.parseInt(pidText ?? "", 10);
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    return { pid, role: role === "serve" || role === "index" ? role : undefined };
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === "EPERM";
  }
}
