import { applyEdits, modify } from "jsonc-parser";

/**
 * The config as a replica with a shared store runs it: the config file's text with its servers
 * replaced by the registry's (src/store/server-registry.ts). Everything else of the file (settings,
 * profiles, plugins, comments) stays as written, and the result is loaded by the same loader as the
 * file itself (`loadConfig({ text })`), so the registry's entries get the file's checks: validation,
 * the launch-spec approval of what an agent wrote, `${VAR}` expanded only for a person's entries.
 */
export function configTextWithServers(
  fileText: string | undefined,
  servers: Readonly<Record<string, Record<string, unknown>>>,
): string {
  const formattingOptions = { insertSpaces: true, tabSize: 2, eol: "\n" };
  let text = fileText?.trim() ? fileText : "{}\n";
  // One map holds the servers: VS Code's `servers` section, if the file has one, goes.
  text = applyEdits(text, modify(text, ["servers"], undefined, { formattingOptions }));
  return applyEdits(text, modify(text, ["mcpServers"], servers, { formattingOptions }));
}
