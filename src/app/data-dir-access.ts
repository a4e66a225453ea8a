import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ResolvedConfig } from "../config/load-config.ts";
import { storeLocationOf } from "../config/store-setting.ts";
import { describeError, ProxyError } from "../errors.ts";
import type { Logger } from "../log.ts";

/**
 * Whether `serve` can write its data dir, found out once at start by writing a small file there,
 * rather than at the first of the many files serve keeps there (the writer lock, the catalog,
 * the statistics, keys): a read-only dir (a read-only mount, a directory of another user) is
 * served from without writing, a full disk is said plainly. The same words for a write that fails
 * later in the start (dataDirFailure).
 */
export type DataDirAccess =
  | { writable: true }
  | { writable: false; problem: "read-only" | "full"; detail: string };

const READ_ONLY_CODES = new Set(["EROFS", "EACCES", "EPERM"]);
const FULL_CODES = new Set(["ENOSPC", "EDQUOT"]);
/** A page's worth: a disk with less room than that left fails the catalog's first write anyway. */
const PROBE_BYTES = 4096;

export function probeDataDir(dataDir: string): DataDirAccess {
  const probe = join(dataDir, `.write-probe-${process.pid}`);
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(probe, Buffer.alloc(PROBE_BYTES), { mode: 0o600 });
    rmSync(probe);
    return { writable: true };
  } catch (error) {
    // What a full disk let it make (the file, not its bytes); a read-only one made nothing.
    if (existsSync(probe)) rmSync(probe, { force: true });
    const problem = problemOf(error);
    if (problem === undefined) throw dataDirFailure(error, dataDir) ?? error;
    return { writable: false, problem, detail: describeError(error) };
  }
}

/**
 * What serve makes of its data dir: true when it can write there; false for a read-only one, said
 * once (serve then writes nothing there: no lock file, the catalog read, the statistics off).
 * Throws for a full disk, and for a read-only dir under a shared store, whose replica keeps its
 * copy of the store's catalog there (store/local-copy.ts).
 */
export function dataDirForServe(config: Pick<ResolvedConfig, "dataDir" | "store">, logger: Logger): boolean {
  const access = probeDataDir(config.dataDir);
  if (access.writable) return true;
  if (access.problem === "full") throw fullDataDir(config.dataDir, access.detail);
  if (storeLocationOf(config.store).kind !== "local")
    throw new ProxyError(
      "DATA_DIR_UNWRITABLE",
      `The data dir ${config.dataDir} cannot be written (${access.detail}): a replica of a shared store keeps ` +
        "its copy of the store's catalog there. Give it a writable one (--data-dir, MCPPROXY_DATA_DIR).",
    );
  logger.warn(
    `the data dir ${config.dataDir} cannot be written (${access.detail}): serving without writing to it: ` +
      "the saved index is read and what the servers list is kept in memory, no call statistics, nothing " +
      "saved. Make it writable (or give --data-dir another) for serve to save them.",
  );
  return false;
}

/** Why the data dir cannot be written, from a file system or SQLite error; undefined for another error. */
function problemOf(error: unknown): "read-only" | "full" | undefined {
  const code = String((error as { code?: unknown } | undefined)?.code ?? "");
  if (FULL_CODES.has(code) || code === "SQLITE_FULL") return "full";
  if (READ_ONLY_CODES.has(code) || code.startsWith("SQLITE_READONLY")) return "read-only";
  return undefined;
}

/** A full disk at start: serve keeps its index, logins and keys there, and would lose what it could not save. */
function fullDataDir(dataDir: string, detail: string): ProxyError {
  return new ProxyError(
    "DATA_DIR_UNWRITABLE",
    `The disk of the data dir ${dataDir} is full (${detail}): mcpproxy serve keeps its index, logins and ` +
      "statistics there. Free some space on it, or give serve another data dir (--data-dir, MCPPROXY_DATA_DIR).",
  );
}

/**
 * Whether an error is about the data dir: a file system error on a path in it, or SQLite's (serve's
 * databases are all there). Not an EACCES of a port or a command, whatever its code.
 */
function isInDataDir(error: unknown, dataDir: string): boolean {
  const { code, path } = (error ?? {}) as { code?: unknown; path?: unknown };
  if (String(code ?? "").startsWith("SQLITE_")) return true;
  return (
    typeof path === "string" &&
    (path === dataDir || path.startsWith(`${dataDir}/`) || dataDir.startsWith(`${path}/`))
  );
}

/**
 * A write to the data dir that failed during the start, as one line that says what is wrong and
 * what to do; undefined when the error is not a read-only or full file system (or is a ProxyError).
 */
export function dataDirFailure(error: unknown, dataDir: string): ProxyError | undefined {
  if (error instanceof ProxyError || !isInDataDir(error, dataDir)) return undefined;
  const code = String((error as { code?: unknown } | undefined)?.code ?? "");
  if (code === "ENOTDIR" || code === "EEXIST")
    return new ProxyError(
      "DATA_DIR_UNWRITABLE",
      `The data dir ${dataDir} cannot be made: ${describeError(error)}. Give serve a directory (--data-dir, ` +
        "MCPPROXY_DATA_DIR), not a path through a file.",
      { cause: error },
    );
  const problem = problemOf(error);
  if (problem === "full") return fullDataDir(dataDir, describeError(error));
  if (problem === "read-only")
    return new ProxyError(
      "DATA_DIR_UNWRITABLE",
      `Could not write to the data dir ${dataDir} (${describeError(error)}): make it writable, or give serve ` +
        "another one (--data-dir, MCPPROXY_DATA_DIR).",
      { cause: error },
    );
  return undefined;
}
