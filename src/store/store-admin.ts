import type { Logger } from "../log.ts";
import { connectPostgres, type Sql } from "./postgres/connect.ts";
import { migrate, schemaStatus } from "./postgres/migrations.ts";
import { readStoreReport, type StoreReport } from "./postgres/store-status.ts";
import { type ServerEntries, seedRegistry } from "./server-registry.ts";
import { HEARTBEAT_MS, openSharedStore, storeUnavailable } from "./shared-store.ts";

/**
 * What `mcpproxy store init|migrate|status` does to the shared store (src/cli/store-command.ts
 * prints it). Each opens its own short-lived connection, named in pg_stat_activity for what it is.
 */
export interface StoreTarget {
  url: string;
  /** The URL as it may be shown (password masked). */
  shown: string;
}

export interface MigrateOutcome {
  /** The version before. */
  from: number;
  /** The version now. */
  to: number;
  applied: { version: number; name: string }[];
}

/** Runs the missing schema steps (under the migrations lock); a newer schema is refused (CONFIG_INVALID). */
export async function migrateStore(target: StoreTarget, logger?: Logger): Promise<MigrateOutcome> {
  return withConnection(target, "store migrate", logger, async (sql) => {
    const before = await schemaStatus(sql);
    const applied = await migrate(sql);
    const after = await schemaStatus(sql);
    return {
      from: before.current,
      to: after.current,
      applied: before.pending
        .filter((step) => applied.includes(step.version))
        .map(({ version, name }) => ({ version, name })),
    };
  });
}

export interface InitOptions {
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  /** The config file's server entries, as written: they seed an empty server registry. */
  entries: ServerEntries;
}

export interface InitOutcome {
  migrated: readonly number[];
  version: number;
  /** How many servers the config file put in the registry (0: it held servers already). */
  seeded: number;
}

/**
 * Makes the store ready for its first replica: the schema, the key's check value (or the check that
 * this key is the store's), the shared secrets. The same steps as a replica's start (shared-store.ts).
 */
export async function initStore(target: StoreTarget, options: InitOptions): Promise<InitOutcome> {
  const store = await openSharedStore({
    ...target,
    env: options.env,
    logger: options.logger,
    isReplica: false,
  });
  try {
    const seeded = await seedRegistry(store, options.entries);
    const status = await schemaStatus(store.sql);
    return { migrated: store.migrated, version: status.current, seeded };
  } catch (error) {
    throw storeUnavailable(target.shown, error);
  } finally {
    await store.close();
  }
}

/** The status report; never migrates. */
export async function readStoreStatus(target: StoreTarget, logger?: Logger): Promise<StoreReport> {
  return withConnection(target, "store status", logger, (sql) => readStoreReport(sql, HEARTBEAT_MS));
}

async function withConnection<T>(
  target: StoreTarget,
  purpose: string,
  logger: Logger | undefined,
  work: (sql: Sql) => Promise<T>,
): Promise<T> {
  const sql = connectPostgres(target.url, { max: 3, applicationName: `mcpproxy ${purpose}`, logger });
  try {
    return await work(sql);
  } catch (error) {
    throw storeUnavailable(target.shown, error);
  } finally {
    await sql.end({ timeout: 2 }).catch(() => {});
  }
}
