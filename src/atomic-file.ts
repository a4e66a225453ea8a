import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * Temp file + rename in the same directory, so a reader never sees half a file. Data files are
 * the user's alone: 0600, in a directory created 0700.
 */
export async function writeFileAtomic(path: string, content: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = tempPathFor(path);
  try {
    await writeFile(temp, content, { mode: 0o600 });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** The same, synchronous: for small files written from code that cannot wait (OAuth tokens). */
export function writeFileAtomicSync(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = tempPathFor(path);
  try {
    writeFileSync(temp, content, { mode: 0o600 });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * A temp name beside `path`, unique, that names the process writing it: `<file>.<pid>.<random>.tmp`.
 * A process killed between writing and renaming leaves it behind; `removeStaleTemps` knows it by
 * that pattern and by its writer being gone.
 */
export function tempPathFor(path: string): string {
  return `${path}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
}

/**
 * Removes the temp files of `path` and of the siblings named after it (its backups), our own
 * pattern only, whose writer process is gone: what a kill in the middle of a write left. A live
 * writer's temp is never touched. Best effort: a directory that cannot be listed is left alone.
 */
export function removeStaleTemps(path: string): string[] {
  const prefix = `${basename(path)}.`;
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    // `<file>.<pid>.<random>.tmp`, or a sibling's such as `<file>.bak.<pid>.<random>.tmp`.
    const match = /^(?:[^/]*\.)?(\d+)\.[0-9a-f]{8}\.tmp$/.exec(name.slice(prefix.length));
    if (!match || isAlive(Number(match[1]))) continue;
    try {
      rmSync(join(dirname(path), name), { force: true });
      removed.push(name);
    } catch {
      // gone already, or not ours to remove
    }
  }
  return removed;
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === "EPERM";
  }
}

/**
 * Creates an empty file 0600 (or makes an existing one 0600) before a database opens it: SQLite
 * would create it with the umask's mode, and its -wal and -shm files take the database file's.
 * Its directory is created 0700 when missing: on a new machine `~/.mcpproxy` does not exist yet,
 * and the first command to write there (often `import`, taking the config lock) must make it.
 */
export function createPrivateFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (!existsSync(path)) writeFileSync(path, "", { mode: 0o600 });
  chmodSync(path, 0o600);
}
