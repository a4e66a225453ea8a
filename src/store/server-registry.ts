import { ProxyError } from "../errors.ts";
import type { ServerEdit } from "./config-writer.ts";
import { LOCKS, MCPPROXY_LOCK_SPACE } from "./postgres/lock-keys.ts";
import type { SharedStore } from "./shared-store.ts";

/**
 * The server registry of a team deployment: `mcpproxy.servers`, one row per server, its entry as
 * the config file would hold it (`${VAR}` as written, an agent's `agent` mark, a person's
 * `approved` hash, `disabledTools` and tool overrides). With a shared store it replaces the config
 * file's `mcpServers` on every replica; the file keeps every other setting. The file seeds it once
 * (`seedRegistry`: the first replica to start, or `mcpproxy store init`); after that the registry
 * wins, and an edit of the file's servers is not applied (the replica says so).
 *
 * Edits are read-modify-writes like those of the config file (config-writer.ts), and as there two at
 * once must not lose one: each runs in a transaction holding a transaction-scoped advisory lock
 * (LOCKS.registry), so edits from every replica and command run one after another, and each is
 * planned from the rows as they are once it holds the lock (an `update` merges into the entry the
 * previous edit wrote). The change is recorded in the same transaction (kind `servers`), so every
 * replica hears of it at commit and reloads its servers.
 */
export type ServerEntries = Record<string, Record<string, unknown>>;

/** The change kind of the registry's edits; its subject is `{ names }`, the servers edited. */
const SERVERS_CHANGE = "servers";

interface RegistryEditOptions {
  /** Who edits, kept in `updated_by`: e.g. "upstream_servers on <replica>", "mcpproxy servers". */
  by: string;
  /** Checks the servers as they would be after the edit; a throw leaves the registry as it was. */
  validate?: ((next: ServerEntries) => void) | undefined;
}

export interface ServerRegistry {
  /** Every server's entry, by name. */
  list(): Promise<ServerEntries>;
  /**
   * Plans edits from the servers the registry holds (under the registry lock; `plan` may throw to
   * refuse) and writes them. Resolves to the edits made and the servers after them.
   */
  edit(
    plan: (current: ServerEntries) => readonly ServerEdit[],
    options: RegistryEditOptions,
  ): Promise<{ edits: readonly ServerEdit[]; servers: ServerEntries }>;
  /** Calls `handler` after another replica or a command edited the registry; returns a function that stops. */
  onChange(handler: (names: readonly string[]) => void | Promise<void>): () => void;
}

type Sql = SharedStore["sql"];

/** The registry's entries as they are (also for a reader without a SharedStore: `doctor --store`). */
export async function readEntries(sql: Sql): Promise<ServerEntries> {
  const rows = await sql<{ name: string; entry: Record<string, unknown> }[]>`
    SELECT name, entry FROM mcpproxy.servers ORDER BY name`;
  // fromEntries defines own keys: a server named `__proto__` stays a name, never a prototype.
  return Object.fromEntries(rows.map((row) => [row.name, row.entry]));
}

/** The servers after `edits`, built the same way. */
function editedEntries(current: ServerEntries, edits: readonly ServerEdit[]): ServerEntries {
  const edited = new Map(Object.entries(current));
  for (const { name, entry } of edits) {
    if (entry === undefined) edited.delete(name);
    else edited.set(name, entry);
  }
  return Object.fromEntries(edited);
}

export function serverRegistryOf(store: SharedStore): ServerRegistry {
  const { sql } = store;
  return {
    list: () => readEntries(sql),
    async edit(plan, options) {
      return sql.begin(async (transaction) => {
        // The transaction's client has the query functions of `sql` (not its pool's).
        const tx = transaction as unknown as Sql;
        await tx`SELECT pg_advisory_xact_lock(${MCPPROXY_LOCK_SPACE}, ${LOCKS.registry})`;
        const current = await readEntries(tx);
        const edits = plan(current);
        const next = editedEntries(current, edits);
        options.validate?.(next);
        for (const { name, entry } of edits) {
          if (entry === undefined) await tx`DELETE FROM mcpproxy.servers WHERE name = ${name}`;
          else
            await tx`
              INSERT INTO mcpproxy.servers (name, entry, updated_at, updated_by)
              VALUES (${name}, ${tx.json(entry as never)}, now(), ${options.by})
              ON CONFLICT (name) DO UPDATE
                SET entry = EXCLUDED.entry, updated_at = now(), updated_by = EXCLUDED.updated_by`;
        }
        if (edits.length > 0)
          await store.recordChange(tx, SERVERS_CHANGE, { names: edits.map((edit) => edit.name) });
        return { edits, servers: next };
      }) as Promise<{ edits: readonly ServerEdit[]; servers: ServerEntries }>;
    },
    onChange(handler) {
      return store.changes.on(SERVERS_CHANGE, async (change) => {
        // This replica applied its own edits as it made them.
        if (change.isOwn) return;
        const names = change.subject.names;
        await handler(Array.isArray(names) ? names.map(String) : []);
      });
    },
  };
}

/**
 * Fills an empty registry with the config file's servers (entries as the file holds them).
 * Resolves to how many were written: 0 when the registry held servers already (it wins then).
 * Replicas starting together seed once: the registry lock orders them, and the second finds it full.
 */
export async function seedRegistry(
  store: SharedStore,
  fileServers: ServerEntries,
  by = "the config file",
): Promise<number> {
  let seeded = 0;
  try {
    await serverRegistryOf(store).edit(
      (current) => {
        if (Object.keys(current).length > 0) return [];
        const edits = Object.entries(fileServers).map(([name, entry]) => ({ name, entry }));
        seeded = edits.length;
        return edits;
      },
      { by },
    );
  } catch (error) {
    if (error instanceof ProxyError) throw error;
    throw new ProxyError(
      "STORE_UNAVAILABLE",
      `Could not seed the shared store's server registry from the config file: ${String(error)}`,
      { cause: error },
    );
  }
  return seeded;
}
