import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * One writer per data dir. Two proxies that both write the catalog and the saved index would each
 * stamp a snapshot of their own view with the other's generation. The first `serve` or `index`
 * takes `writer.lock` (its pid, created exclusively, 0600); a second `serve` on the same data dir
 * serves from the saved index without writing (it says so), a second `index` stops with a message.
 * A lock left by a process that is gone is taken over.
 */
export const LOCK_FILE = "writer.lock";

export interface WriterLock {
  /** True when this process may write the catalog. */
  readonly isHeld: boolean;
  /** The pid of the process that holds it, when another does. */
  readonly holder?: number;
  release(): void;
}

export function acquireWriterLock(dataDir: string): WriterLock {
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return {
        isHeld: true,
        release() {
          if (holderOf(path) === process.pid) rmSync(path, { force: true });
        },
      };
    } catch (error) {
      if ((error as { code?: string }).code !== "EEXIST") throw error;
      const holder = holderOf(path);
      if (holder !== undefined && holder !== process.pid && isAlive(holder)) {
        return { isHeld: false, holder, release() {} };
      }
      rmSync(path, { force: true }); // left by a process that is gone
    }
  }
  return { isHeld: false, release() {} };
}

function holderOf(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8"), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === "EPERM";
  }
}
