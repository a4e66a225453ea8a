import { closeSync, existsSync, openSync, readFileSync, readSync, rmSync, statSync } from "node:fs";
import { writeFileAtomicSync } from "../../atomic-file.ts";

/**
 * Whether a catalog file is, to the byte, the one a proxy last closed cleanly: then its integrity
 * check at open is spared (a quick_check of a 125 MB catalog is 0.12-0.14 s of every start at
 * 100,000 tools). What is recorded at a clean close is the file's size, times and inode, with no
 * write-ahead log left beside it, and a hash of its bytes. A file whose size, times and inode are
 * those recorded is taken as unchanged at once; one that differs only in those (a copy of the data
 * dir, a backup restored, a touch) is hashed, which is a fifth of the check's time, and spared the
 * check when its bytes are the same. One not closed cleanly (a crash, a proxy still running) or
 * changed since is checked as before. Damage that changes none of size, times and inode (a disk
 * that rots in place) shows up when the page is read, as it would between two checks.
 */

const stampPath = (path: string) => `${path}.closed`;

/** Size, times and inode: what a write, a copy or a touch changes. */
function statStampOf(path: string): string | undefined {
  try {
    const { size, mtimeMs, ctimeMs, ino } = statSync(path);
    return `${size}:${mtimeMs}:${ctimeMs}:${ino}`;
  } catch {
    return undefined;
  }
}

/** Read in slices of this size: the file is never held whole. */
const HASH_SLICE_BYTES = 1024 * 1024;

/** A hash of the file's bytes (wyhash, chained over its slices), or undefined when it cannot be read. */
function contentHashOf(path: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const slice = new Uint8Array(HASH_SLICE_BYTES);
    let hash = 0n;
    for (let read = readSync(fd, slice); read > 0; read = readSync(fd, slice)) {
      hash = BigInt(Bun.hash.wyhash(read === slice.length ? slice : slice.subarray(0, read), hash));
    }
    return hash.toString(16);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Whether nothing has touched the file since a clean close recorded it, or only what leaves its bytes as they were. */
export function isUnchangedSinceCleanClose(path: string): boolean {
  if (hasLog(path)) return false;
  let recorded: string;
  try {
    recorded = readFileSync(stampPath(path), "utf8");
  } catch {
    return false;
  }
  const [stat, hash] = recorded.split(" ");
  const now = statStampOf(path);
  if (now === undefined) return false;
  if (now === stat) return true;
  // Another size: other bytes, without reading them.
  if (hash === undefined || now.split(":")[0] !== stat?.split(":")[0]) return false;
  return contentHashOf(path) === hash;
}

/** Records the file as it is after a clean close (its log checkpointed away); anything else forgets it. */
export function recordCleanClose(path: string): void {
  const stat = hasLog(path) ? undefined : statStampOf(path);
  const hash = stat === undefined ? undefined : contentHashOf(path);
  try {
    if (stat === undefined || hash === undefined) rmSync(stampPath(path), { force: true });
    else writeFileAtomicSync(stampPath(path), `${stat} ${hash}`);
  } catch {
    // Not recorded: the next open checks the file, as it always did.
  }
}

/** A write-ahead log with anything in it: the file is open elsewhere, or was not closed cleanly. */
function hasLog(path: string): boolean {
  const log = `${path}-wal`;
  return existsSync(log) && statSync(log).size > 0;
}
