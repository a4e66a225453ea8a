import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * Temp file + rename in the same directory, so a reader never sees half a file. Data files are
 * the user's alone: 0600, in a directory created 0700.
 */
export async function writeFileAtomic(path: string, content: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${randomUUID().slice(0, 8)}.tmp`;
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
  const temp = `${path}.${randomUUID().slice(0, 8)}.tmp`;
  try {
    writeFileSync(temp, content, { mode: 0o600 });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * Creates an empty file 0600 (or makes an existing one 0600) before a database opens it: SQLite
 * would create it with the umask's mode, and its -wal and -shm files take the database file's.
 */
export function createPrivateFile(path: string): void {
  if (!existsSync(path)) writeFileSync(path, "", { mode: 0o600 });
  chmodSync(path, 0o600);
}
