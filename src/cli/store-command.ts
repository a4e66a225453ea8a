import { COMMON_OPTIONS, type Command, commandHelp } from "./command.ts";

/**
 * `mcpproxy store init|migrate|rekey|status`: the operator's side of the shared store (PostgreSQL) that
 * `serve --store` replicas share. What each does to the store lives in src/store/store-admin.ts.
 */
const SUBCOMMANDS = {
  init: {
    summary:
      "Prepare a shared store for its first replica: run the schema migrations, record MCPPROXY_STORE_KEY's " +
      "check value (or check that this key is the store's), make the secrets every replica shares. " +
      "Safe to run again. Needs MCPPROXY_STORE_KEY.",
  },
  migrate: {
    summary:
      "Run the schema migrations the store lacks (under a lock: replicas starting at the same time wait), " +
      "and print what was applied. A store migrated by a newer mcpproxy is refused.",
  },
  rekey: {
    summary:
      "Seal everything the store keeps under a new key, in one transaction, with every replica stopped: " +
      "MCPPROXY_STORE_NEW_KEY if set (move to a random key: MCPPROXY_STORE_NEW_KEY=$(openssl rand -hex 32)), " +
      "else MCPPROXY_STORE_KEY itself stretched again with scrypt's parameters of the day (a passphrase of a " +
      "store set up before scrypt, or to raise its cost). Kept large results are dropped. Needs MCPPROXY_STORE_KEY; " +
      "then start the replicas with the new key.",
  },
  status: {
    summary:
      "Show the store's schema version, the replicas (alive when seen within three heartbeats), who holds " +
      "the lease, what it keeps, its size and the last change. Exits 1 when migrations are pending.",
  },
} as const;
type Subcommand = keyof typeof SUBCOMMANDS;

const OPTIONS = {
  store: {
    type: "string",
    help: "--store URL        the store, postgres://user@host:port/db (default: MCPPROXY_STORE, then mcpproxy.store)",
  },
  json: { type: "boolean", help: "--json             print the result as JSON" },
  config: COMMON_OPTIONS.config,
  help: COMMON_OPTIONS.help,
} as const;

const USAGE_TAIL = "[--store URL] [--json] [--config FILE]";

export const storeCommand: Command = {
  name: "store",
  summary:
    "Operate the shared store of a team deployment (PostgreSQL, `serve --store`): init prepares it, " +
    "migrate runs pending schema steps, rekey seals its secrets under a new key, status shows versions, " +
    "replicas, the lease and sizes.",
  usage: `mcpproxy store init|migrate|rekey|status ${USAGE_TAIL}`,
  allowPositionals: true,
  options: OPTIONS,
  helpOf(positionals) {
    const name = positionals[0];
    if (!isSubcommand(name)) return undefined;
    return commandHelp({
      ...storeCommand,
      usage: `mcpproxy store ${name} ${USAGE_TAIL}`,
      ...SUBCOMMANDS[name],
    });
  },
  async load() {
    return (await import("./store-run.ts")).runStoreCommand;
  },
};

function isSubcommand(name: string | undefined): name is Subcommand {
  return name !== undefined && Object.hasOwn(SUBCOMMANDS, name);
}
