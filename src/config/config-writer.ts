import { chmodSync, copyFileSync, existsSync, readFileSync } from "node:fs";
import { applyEdits, modify, parse } from "jsonc-parser";
import { writeFileAtomic } from "../index/atomic-file.ts";
import { readConfigFile } from "./config-file.ts";

/**
 * Edits server entries of mcpproxy's config file in place (`mcpproxy import`, `upstream_servers`,
 * `mcpproxy servers`): only the entries named change, so the user's comments, order and formatting
 * stay as they were. The previous file is kept beside it as a backup (one per import, dated; one
 * rolling `.bak` for run-time changes, which may be many), and the new one replaces it in one rename.
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

/** One server entry to set (`entry`) or delete (`entry` undefined). */
export interface ServerEdit {
  name: string;
  entry: Record<string, unknown> | undefined;
}

/** Writes the edits; resolves to the new text and the backup's path, if there was a file to back up. */
export async function editConfigServers(
  path: string,
  section: ConfigServers["section"],
  edits: readonly ServerEdit[],
  backupAs: "dated" | "rolling",
  now = new Date(),
): Promise<{ text: string; backup: string | undefined }> {
  const existed = existsSync(path);
  let text = existed ? readFileSync(path, "utf8") : "{}\n";
  const formattingOptions = { insertSpaces: true, tabSize: 2, eol: "\n" };
  for (const { name, entry } of edits) {
    text = applyEdits(text, modify(text, [section, name], entry, { formattingOptions }));
  }
  // What was written must read back as what was meant (a malformed original would not).
  const check = parse(text, [], { allowTrailingComma: true }) as Record<string, Record<string, unknown>>;
  for (const { name, entry } of edits) {
    if (Boolean(check?.[section]?.[name]) !== (entry !== undefined))
      throw new Error(`could not edit ${name} in ${path}`);
  }
  let backup: string | undefined;
  if (existed) {
    backup =
      backupAs === "rolling"
        ? `${path}.bak`
        : `${path}.bak-${now.toISOString().replace(/[-:]/g, "").replace(/\..*/, "")}`;
    copyFileSync(path, backup);
    chmodSync(backup, 0o600); // it may sit in the data dir, whose files are the user's alone
  }
  if (!text.endsWith("\n")) text = `${text}\n`;
  await writeFileAtomic(path, text);
  return { text, backup };
}
