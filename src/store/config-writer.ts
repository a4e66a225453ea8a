import {
  closeSync,
  existsSync,
  fstatSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { applyEdits, modify, parse } from "jsonc-parser";
import { removeStaleTemps, tempPathFor, writeFileAtomicSync } from "../atomic-file.ts";
import { parseConfigText, readConfigFile } from "../config/config-file.ts";
import { describeError, isProxyError, ProxyError } from "../errors.ts";
import { withConfigLock } from "./sqlite/config-lock.ts";
import { renameNoReplace, swapFiles } from "./swap-file.ts";

/**
 * Edits server entries of mcpproxy's config file in place (`mcpproxy import`, `upstream_servers`,
 * `mcpproxy servers`, `approve`): only the entries named change, so the user's comments, order and
 * formatting stay as they were. The previous file is kept beside it as a backup (one per import,
 * dated; one rolling `.bak` for run-time changes, which may be many), and the new one replaces it
 * in one rename.
 *
 * An edit is a read-modify-write that must lose nothing: it runs under the config lock
 * (config-lock.ts, which orders the edits of every mcpproxy process), its changes are planned from
 * the file as it is read inside the lock, and the new text replaces the file only if the file is
 * still what was read: a person who saved the file meanwhile (an editor takes no lock) gets the
 * edit redone on top of their version rather than overwritten. The check is made just before the
 * rename, and where the system can swap two files atomically (swap-file.ts) once more after it.
 */
export interface ConfigServers {
  /** The map servers live in: `mcpServers`, or VS Code's `servers` when the file uses that. */
  section: "mcpServers" | "servers";
  servers: Record<string, Record<string, unknown>>;
}

export function readConfigServers(path: string): ConfigServers {
  return existsSync(path) ? serversOf(readConfigFile(path)) : serversOf(undefined);
}

/** The same for text read already (undefined: no file). */
export function configServersOf(text: string | undefined, path: string): ConfigServers {
  return serversOf(text === undefined ? undefined : parseConfigText(text, path));
}

function serversOf(parsed: unknown): ConfigServers {
  const root = parsed as Record<string, unknown> | null | undefined;
  const section = root?.mcpServers === undefined && root?.servers !== undefined ? "servers" : "mcpServers";
  const map = root?.[section];
  return {
    section,
    servers: map && typeof map === "object" && !Array.isArray(map) ? (map as ConfigServers["servers"]) : {},
  };
}

/** One server entry to set (`entry`) or delete (`entry` undefined). */
export interface ServerEdit {
  name: string;
  entry: Record<string, unknown> | undefined;
}

export interface ConfigUpdateOptions {
  /** `none`: the file holds nothing worth keeping (the empty one a first run just created). */
  backupAs: "dated" | "rolling" | "none";
  /** Checks the new text before it replaces the file; a throw leaves the file as it was. */
  validate?: ((text: string) => void) | undefined;
  now?: Date | undefined;
}

export interface ConfigUpdate {
  /** The text written. */
  text: string;
  /** The previous file's copy, when there was a file. */
  backup: string | undefined;
  /** The edits made, as planned from the file that was changed. */
  edits: readonly ServerEdit[];
  /**
   * Copies of versions that two saves racing this edit left (one made on top of the other in the
   * instant this edit put a version back): kept beside the file for a person to look at. Rare.
   */
  conflicts: string[];
}

/** How often an edit is redone on a file that keeps changing under it before it gives up. */
const MAX_ATTEMPTS = 20;

/**
 * Plans edits from the servers the file holds now (`plan` may throw to refuse) and writes them.
 * `plan` and `validate` may run more than once: when the file changed under the edit, it is redone.
 */
export function updateConfigServers(
  path: string,
  plan: (current: ConfigServers) => readonly ServerEdit[],
  options: ConfigUpdateOptions,
): Promise<ConfigUpdate> {
  return withConfigLock(path, () => {
    const conflicts: string[] = [];
    // Temps a killed writer left (ours only, their writer gone): no edit reads or keeps them.
    removeStaleTemps(path);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const before = readVersion(path);
      const current = serversOf(before ? parseConfigText(before.text, path) : undefined);
      const edits = plan(current);
      const text = editedText(path, before?.text ?? "{}\n", current.section, edits);
      options.validate?.(text);
      const backup =
        before && options.backupAs !== "none"
          ? backupPath(path, options.backupAs, options.now ?? new Date())
          : undefined;
      // The backup holds exactly what this edit replaces; written whole or not at all, so a full
      // disk never leaves a truncated one in place of a good one.
      if (before && backup) writeOrExplain(backup, () => writeFileAtomicSync(backup, before.text), path);
      const temp = tempPathFor(path);
      writeOrExplain(path, () => writeFileSync(temp, text, { mode: 0o600 }), path, temp);
      const outcome = commit(path, temp, before, text);
      if (outcome.conflict) conflicts.push(outcome.conflict);
      // Otherwise someone else's change landed meanwhile: plan again on top of it.
      if (outcome.isDone) return { text, backup, edits, conflicts };
    }
    throw new ProxyError(
      "CONFIG_WRITE_FAILED",
      `${path} kept changing while mcpproxy tried to edit it (${MAX_ATTEMPTS} times): nothing was changed. Try again.`,
    );
  });
}

/**
 * Puts the edited text in place of the version it was planned from, or reports that the file
 * changed meanwhile (nothing written, or what was replaced put back). With an atomic exchange the
 * replaced version is checked after the fact, so a save in the last instant is never lost; without
 * one, the check is made just before the rename.
 */
function commit(
  path: string,
  temp: string,
  before: FileVersion | undefined,
  text: string,
): { isDone: boolean; conflict?: string } {
  if (!before) {
    if (renameNoReplace(temp, path)) return { isDone: true };
    if (existsSync(path)) {
      rmSync(temp, { force: true });
      return { isDone: false };
    }
    renameSync(temp, path);
    return { isDone: true };
  }
  if (!isUnchanged(path, before)) {
    rmSync(temp, { force: true });
    return { isDone: false };
  }
  if (!swapFiles(temp, path)) {
    renameSync(temp, path);
    return { isDone: true };
  }
  // `temp` now names what the edit replaced.
  if (readFileSync(temp, "utf8") === before.text) {
    rmSync(temp, { force: true });
    return { isDone: true };
  }
  // A save landed after the last look: put it back, and plan the edit again on top of it.
  const isBack = swapFiles(temp, path);
  if (isBack && readFileSync(temp, "utf8") === text) {
    rmSync(temp, { force: true });
    return { isDone: false };
  }
  // Someone saved on top of this edit in that instant (or it could not be put back): keep that
  // version for a person rather than lose it.
  const conflict = `${path}.conflict-${new Date().toISOString().replace(/[-:]/g, "").replace(/\..*/, "")}-${process.pid}`;
  renameSync(temp, conflict);
  return { isDone: false, conflict };
}

interface FileVersion {
  text: string;
  stat: { ino: bigint; size: bigint; mtimeNs: bigint; ctimeNs: bigint };
}

/** The file's text and its identity, read from one open file (so they belong together). */
function readVersion(path: string): FileVersion | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const { ino, size, mtimeNs, ctimeNs } = fstatSync(fd, { bigint: true });
    return { text: readFileSync(fd, "utf8"), stat: { ino, size, mtimeNs, ctimeNs } };
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether the file is still the version the edit started from: the same text (an in-place save on a
 * file system with coarse timestamps), then, last thing before the rename, the same file (a save
 * by rename gives a new inode; an in-place one a new mtime).
 */
function isUnchanged(path: string, before: FileVersion | undefined): boolean {
  if (!before) return !existsSync(path);
  const now = readVersion(path);
  if (!now || now.text !== before.text) return false;
  const stat = statSync(path, { bigint: true, throwIfNoEntry: false });
  return (
    stat !== undefined &&
    stat.ino === before.stat.ino &&
    stat.size === before.stat.size &&
    stat.mtimeNs === before.stat.mtimeNs &&
    stat.ctimeNs === before.stat.ctimeNs
  );
}

function editedText(
  path: string,
  original: string,
  section: ConfigServers["section"],
  edits: readonly ServerEdit[],
): string {
  let text = original;
  const formattingOptions = { insertSpaces: true, tabSize: 2, eol: "\n" };
  for (const { name, entry } of edits) {
    text = applyEdits(text, modify(text, [section, name], entry, { formattingOptions }));
  }
  // What was written must read back as what was meant (a malformed original would not).
  const check = parse(text, [], { allowTrailingComma: true }) as Record<string, Record<string, unknown>>;
  for (const { name, entry } of edits) {
    if (Boolean(check?.[section]?.[name]) !== (entry !== undefined))
      throw new ProxyError("CONFIG_INVALID", `Could not edit ${name} in ${path}: fix the file by hand.`);
  }
  return text.endsWith("\n") ? text : `${text}\n`;
}

function backupPath(path: string, backupAs: "dated" | "rolling", now: Date): string {
  return backupAs === "rolling"
    ? `${path}.bak`
    : `${path}.bak-${now.toISOString().replace(/[-:]/g, "").replace(/\..*/, "")}`;
}

/** Runs a write; a failure (a full disk, a read-only directory) is one clear error, and `path` is as it was. */
function writeOrExplain(target: string, write: () => void, path: string, temp?: string): void {
  try {
    write();
  } catch (error) {
    if (temp) rmSync(temp, { force: true });
    if (isProxyError(error)) throw error;
    throw new ProxyError(
      "CONFIG_WRITE_FAILED",
      `Could not write ${target} (${describeError(error)}): ${path} was not changed. Free some space or fix the permissions, and try again.`,
      { cause: error },
    );
  }
}
