import { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { createPrivateFile } from "../../atomic-file.ts";
import { describeError, ProxyError } from "../../errors.ts";

/**
 * One read-modify-write of the config file at a time, within a process and across processes: two
 * `serve`s on one config, `serve` and `mcpproxy servers`, `approve` or `import` may edit it at
 * once, and each edit must start from what the one before wrote.
 *
 * The lock is an exclusive SQLite transaction on `<config>.lock` beside the config file. SQLite
 * locks are the operating system's (fcntl on Unix, LockFileEx on Windows), held by the process
 * and released when it dies, so a killed writer leaves no stale lock for the next to judge; a pid
 * file would. The file itself stays (one empty page), like any lock file. Waiting is a poll, never a
 * blocking busy timeout: `serve` keeps answering while another process holds the lock.
 */
const LOCK_SUFFIX = ".lock";
/** How long an edit waits for another process's edit to finish. Edits take milliseconds. */
const WAIT_MS = 30_000;
const POLL_MS = 5;

/** In-process queue per config file: the second edit waits here rather than polling its own process. */
const queues = new Map<string, Promise<unknown>>();

export function withConfigLock<T>(configPath: string, work: () => Promise<T> | T): Promise<T> {
  const previous = queues.get(configPath) ?? Promise.resolve();
  const run = previous.then(
    () => holdingLock(configPath, work),
    () => holdingLock(configPath, work),
  );
  const settled = run.catch(() => undefined);
  queues.set(configPath, settled);
  void settled.then(() => {
    if (queues.get(configPath) === settled) queues.delete(configPath);
  });
  return run;
}

async function holdingLock<T>(configPath: string, work: () => Promise<T> | T): Promise<T> {
  const path = `${configPath}${LOCK_SUFFIX}`;
  createPrivateFile(path);
  const db = new Database(path);
  try {
    db.exec("PRAGMA busy_timeout = 0");
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      try {
        // An empty file is given its one page first: SQLite writes it when it first locks, which a
        // full disk would refuse; once there, taking the lock writes nothing.
        if (statSync(path).size === 0) db.exec("PRAGMA user_version = 1");
        db.exec("BEGIN EXCLUSIVE");
        break;
      } catch (error) {
        if (!isBusy(error)) {
          throw new ProxyError(
            "CONFIG_WRITE_FAILED",
            `Could not take the lock ${path} (${describeError(error)}): ${configPath} was not changed. Free some space or fix the permissions, and try again.`,
            { cause: error },
          );
        }
        if (Date.now() > deadline) {
          throw new ProxyError(
            "CONFIG_WRITE_FAILED",
            `Another mcpproxy has been editing ${configPath} for ${WAIT_MS / 1000} s: nothing was changed. Try again; if it keeps happening, look for a stuck mcpproxy process.`,
          );
        }
        await Bun.sleep(POLL_MS);
      }
    }
    try {
      return await work();
    } finally {
      db.exec("ROLLBACK");
    }
  } finally {
    db.close();
  }
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "SQLITE_BUSY" || code === "SQLITE_LOCKED" || /database is locked/i.test(String(error));
}
