import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { applyEdits, modify, parse } from "jsonc-parser";
import { readConfigFile } from "../config/config-file.ts";
import { writeFileAtomic } from "../index/atomic-file.ts";

/**
 * Adds server entries to mcpproxy's config file in place: only the new entries are inserted, so
 * the user's comments, order and formatting stay as they were. The previous file is kept beside
 * it as a backup, and the new one replaces it in one rename.
 */
export interface ConfigServers {
  /** The map servers live in: `mcpServers`, or VS Code's `servers` when the file uses that. */
  section: "mcpServers" | "servers";
  servers: Record<string, Record<string, unknown>>;
}

export function readConfigServers(path: string): ConfigServers {
  if (!existsSync(path)) return { section: "mcpServers", servers: {} };
  const root = readConfigFile(path) as Record<string, unknown> | null;
  const section = root?.mcpServers === undefined && root?.servers !== undefined ? "servers" : "mcpServers";
  const map = root?.[section];
  return {
    section,
    servers: map && typeof map === "object" && !Array.isArray(map) ? (map as ConfigServers["servers"]) : {},
  };
}

/** Writes the entries; resolves to the backup's path, if there was a file to back up. */
export async function addServersToConfig(
  path: string,
  section: ConfigServers["section"],
  entries: readonly { name: string; entry: Record<string, unknown> }[],
  now = new Date(),
): Promise<string | undefined> {
  const existed = existsSync(path);
  let text = existed ? readFileSync(path, "utf8") : "{}\n";
  const formattingOptions = { insertSpaces: true, tabSize: 2, eol: "\n" };
  for (const { name, entry } of entries) {
    text = applyEdits(text, modify(text, [section, name], entry, { formattingOptions }));
  }
  // What was written must read back as what was meant (a malformed original would not).
  const check = parse(text, [], { allowTrailingComma: true }) as Record<string, Record<string, unknown>>;
  for (const { name } of entries) {
    if (!check?.[section]?.[name]) throw new Error(`could not add ${name} to ${path}`);
  }
  let backup: string | undefined;
  if (existed) {
    backup = `${path}.bak-${now.toISOString().replace(/[-:]/g, "").replace(/\..*/, "")}`;
    copyFileSync(path, backup);
  }
  await writeFileAtomic(path, text.endsWith("\n") ? text : `${text}\n`);
  return backup;
}
