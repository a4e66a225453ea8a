import { COMMON_OPTIONS, type Command, STORE_OPTION } from "./command.ts";

/**
 * `mcpproxy servers`: the config's servers from the command line, the same operations an agent
 * has with `upstream_servers` (validated the same way, written in place with a `.bak` beside, but
 * for the empty file a first run creates), said in the command line's words when one is missing.
 * A running `serve` watches the file and applies the change to the affected servers only; its
 * live state is in `/health` and `upstream_servers`. With a shared store (`--store`), the same
 * operations on the store's server registry: every replica applies them.
 */
export const serversCommand: Command = {
  name: "servers",
  summary:
    "List the configured servers (tools indexed, quarantined, enabled), or change them: add NAME --url URL | " +
    "add NAME -- COMMAND ARGS…, update NAME --entry JSON, remove, enable, disable. A running proxy applies " +
    "the change to that server alone, without a restart.",
  usage:
    "mcpproxy servers [list] [--json] | add NAME (--url URL | --entry JSON | -- COMMAND [ARGS…]) | " +
    "update NAME --entry JSON | remove|enable|disable NAME [--store URL] [--config FILE] [--data-dir DIR]",
  allowPositionals: true,
  options: {
    url: { type: "string", help: "--url URL          add: a remote (HTTP or SSE) server" },
    entry: {
      type: "string",
      help: '--entry JSON       add/update: the config entry, e.g. \'{"command": "uvx", "args": ["x"]}\'',
    },
    json: { type: "boolean", help: "--json             (list) print the servers as JSON" },
    ...STORE_OPTION,
    ...COMMON_OPTIONS,
  },
  async load() {
    return (await import("./servers-run.ts")).runServersCommand;
  },
};
