import { COMMON_OPTIONS, type Command, STORE_OPTION } from "./command.ts";

/**
 * `mcpproxy auth login|status|logout [SERVER]`: OAuth logins to remote servers. Tokens live in the
 * data dir (0600) and are never printed; a running `serve` picks a new login up within a second.
 * With a shared store (`--store`), the login is kept sealed in the store and every replica uses it.
 */
export const authCommand: Command = {
  name: "auth",
  summary:
    "Log in to remote servers that ask for OAuth: `auth login SERVER` opens the browser ($BROWSER, or prints " +
    "the URL on a headless machine) and takes the code on a loopback redirect; `auth status` shows each " +
    "server's login; `auth logout SERVER` forgets it. A running proxy picks a login up without a restart; " +
    "a second login of a server while one runs says so and stops.",
  usage:
    "mcpproxy auth login SERVER | status [SERVER] [--json] | logout SERVER [--store URL] [--config FILE] [--data-dir DIR]",
  allowPositionals: true,
  options: {
    json: { type: "boolean", help: "--json             (status) print the logins as JSON" },
    ...STORE_OPTION,
    ...COMMON_OPTIONS,
  },
  async load() {
    return (await import("./auth-run.ts")).runAuthCommand;
  },
};
