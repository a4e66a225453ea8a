import { readFileSync } from "node:fs";
import { openCatalog } from "../app/open-catalog.ts";
import { editConfigServers, readConfigServers } from "../config/config-writer.ts";
import type { ResolvedConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors.ts";
import { writeFileAtomic } from "../index/atomic-file.ts";
import { maskUrl } from "../security/mask-url.ts";
import { redactSecrets } from "../security/redact-secrets.ts";
import { editsFor, quarantinedByServer } from "../server/upstream-servers-tool.ts";
import { COMMON_OPTIONS, type Command, commandLogger, loadCommandConfig } from "./command.ts";

/**
 * `mcpproxy servers`: the config's servers from the command line, the same operations an agent
 * has with `upstream_servers` (validated the same way, written in place with a `.bak` beside).
 * A running `serve` watches the file and applies the change to the affected servers only; its
 * live state is in `/health` and `upstream_servers`.
 */
export const serversCommand: Command = {
  name: "servers",
  summary:
    "List the configured servers (tools indexed, quarantined, enabled), or change them: add NAME --url URL | " +
    "add NAME -- COMMAND ARGS…, update NAME --entry JSON, remove, enable, disable. A running proxy applies " +
    "the change to that server alone, without a restart.",
  usage:
    "mcpproxy servers [list] [--json] | add NAME (--url URL | --entry JSON | -- COMMAND [ARGS…]) | " +
    "update NAME --entry JSON | remove|enable|disable NAME [--config FILE] [--data-dir DIR]",
  allowPositionals: true,
  options: {
    url: { type: "string", help: "--url URL          add: a remote (HTTP or SSE) server" },
    entry: {
      type: "string",
      help: '--entry JSON       add/update: the config entry, e.g. \'{"command": "uvx", "args": ["x"]}\'',
    },
    json: { type: "boolean", help: "--json             (list) print the servers as JSON" },
    ...COMMON_OPTIONS,
  },
  async run(values, positionals) {
    const [operation = "list", name, ...command] = positionals;
    const config = loadCommandConfig(values);
    if (operation === "list") return list(config, Boolean(values.json));
    const existing = readConfigServers(config.configPath);
    const server = entryOf(values, command);
    const edits = editsFor({ operation, name, server }, existing.servers, "person");
    const before = readFileSync(config.configPath, "utf8");
    const { backup } = await editConfigServers(config.configPath, existing.section, edits, "rolling");
    let after: ResolvedConfig;
    try {
      after = loadCommandConfig(values);
    } catch (error) {
      await writeFileAtomic(config.configPath, before); // the change would make the file invalid
      throw error;
    }
    // An entry an agent wrote stays the agent's: a change to what it runs needs an approval again.
    const held = after.servers.filter(
      (server) => server.awaitingApproval && edits.some((edit) => edit.name === server.name),
    );
    process.stdout.write(
      `${operation === "add" ? "Added" : operation === "remove" ? "Removed" : operation === "update" ? "Updated" : operation === "enable" ? "Enabled" : "Disabled"} ` +
        `${edits.map((edit) => edit.name).join(", ")} in ${config.configPath}${backup ? ` (the previous file is ${backup})` : ""}. ` +
        "A running mcpproxy applies it now; otherwise run `mcpproxy index`.\n" +
        held
          .map(
            (server) =>
              `${server.name} was written by an agent: it runs once you approve it (\`mcpproxy approve ${server.name}\`).\n`,
          )
          .join(""),
    );
    return 0;
  },
};

function entryOf(values: Record<string, string | boolean | undefined>, command: string[]) {
  if (typeof values.entry === "string") {
    try {
      return JSON.parse(values.entry) as Record<string, unknown>;
    } catch (error) {
      throw new ProxyError("USAGE", `--entry is not JSON: ${String(error)}`);
    }
  }
  if (typeof values.url === "string") return { url: values.url };
  const [executable, ...args] = command;
  return executable ? { command: executable, args } : undefined;
}

async function list(config: ResolvedConfig, json: boolean): Promise<number> {
  const catalog = await openCatalog(config, commandLogger(config), { readOnly: true });
  // What the file says (`${VAR}` as written), not the expanded values: those may be secrets.
  const entries = readConfigServers(config.configPath).servers;
  try {
    const quarantined = quarantinedByServer(catalog);
    const rows = config.servers.map((server) => ({
      name: server.name,
      enabled: server.enabled,
      ...(server.awaitingApproval ? { awaitingApproval: true } : {}),
      transport: server.transport,
      target: targetOf(entries[server.name] ?? {}),
      toolsIndexed: catalog.names(server.name).length,
      quarantinedTools: quarantined.get(server.name) ?? 0,
    }));
    if (json) {
      process.stdout.write(`${JSON.stringify({ servers: rows }, null, 2)}\n`);
      return 0;
    }
    if (rows.length === 0) {
      process.stdout.write(
        `No servers in ${config.configPath}: add one with \`mcpproxy servers add\` or \`mcpproxy import\`.\n`,
      );
      return 0;
    }
    for (const row of rows) {
      const held = row.awaitingApproval ? `(awaiting approval: mcpproxy approve ${row.name}) ` : "";
      process.stdout.write(
        `${row.name}  ${row.enabled ? "" : "(disabled) "}${held}${row.transport}  ${row.toolsIndexed} tools indexed` +
          `${row.quarantinedTools > 0 ? `, ${row.quarantinedTools} quarantined (mcpproxy approve ${row.name})` : ""}\n    ${row.target}\n`,
      );
    }
    return 0;
  } finally {
    await catalog.close();
  }
}

/** The command line or URL of a raw entry, with what could be a secret in a URL masked. */
function targetOf(entry: Record<string, unknown>): string {
  if (typeof entry.command === "string") {
    const args = Array.isArray(entry.args) ? entry.args.map(String) : [];
    return redactSecrets([entry.command, ...args].join(" "));
  }
  return maskUrl(String(entry.url ?? entry.serverUrl ?? ""));
}
