import type { Logger } from "../log.ts";
import { connectPostgres, type Sql } from "./postgres/connect.ts";
import { migrate, schemaStatus } from "./postgres/migrations.ts";
import { readStoreReport, type StoreReport } from "./postgres/store-status.ts";
import { readEntries, type ServerEntries, seedRegistry } from "./server-registry.ts";
import { HEARTBEAT_MS, openSharedStore, storeUnavailable } from "./shared-store.ts";
import { storeSecretFrom } from "./store-key-derivation.ts";
import { recordedKeyCheck, storeKeyIn } from "./store-key-records.ts";

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

/** How this machine's MCPPROXY_STORE_KEY stands against the store's check value. */
type KeyState =
  /** `isLegacyPassphrase`: a passphrase read as a store set up before scrypt had it (store rekey). */
  | { state: "matches"; isLegacyPassphrase: boolean }
  | { state: "differs" }
  /** The store has no check value yet (never initialised). */
  | { state: "unrecorded" }
  /** Not set, or not a usable key: `problem` says which. */
  | { state: "unusable"; problem: string };

export interface StoreInspection {
  report: StoreReport;
  key: KeyState;
  /** The server registry's entries; undefined while the schema is not this mcpproxy's (not read then). */
  entries?: ServerEntries;
  /** How many tools the shared catalog holds, by server. */
  toolsByServer?: Record<string, number>;
}

/**
 * What `doctor --store` checks, read in one short connection: the status report, the key against
 * the store's check value, the registry and the catalog's size by server. Never migrates or writes;
 * throws STORE_UNAVAILABLE when the store cannot be reached.
 */
export async function inspectStore(
  target: StoreTarget,
  env: Readonly<Record<string, string | undefined>>,
  logger?: Logger,
): Promise<StoreInspection> {
  return withConnection(target, "doctor", logger, async (sql) => {
    const report = await readStoreReport(sql, HEARTBEAT_MS);
    // The key is checked whatever the schema (it is this machine's setting); meta exists from version 1.
    const recorded = report.schema.current >= 1 ? await recordedKeyCheck(sql) : undefined;
    let key: KeyState;
    try {
      const secret = storeSecretFrom(env);
      // Derived with the store's own parameters (a passphrase costs scrypt's time here too).
      const derived = recorded === undefined ? undefined : await storeKeyIn(sql, secret, true);
      key = !derived
        ? { state: "unrecorded" }
        : derived.check !== recorded
          ? { state: "differs" }
          : { state: "matches", isLegacyPassphrase: derived.derivation === "legacy-hkdf" };
    } catch (error) {
      key = { state: "unusable", problem: (error as Error).message };
    }
    if (report.schema.current !== report.schema.latest) return { report, key };
    const counts = await sql<{ server: string; tools: string }[]>`
      SELECT server, count(*) AS tools FROM mcpproxy.tools GROUP BY server ORDER BY server`;
    return {
      report,
      key,
      entries: await readEntries(sql),
      toolsByServer: Object.fromEntries(counts.map((row) => [row.server, Number(row.tools)])),
    };
  });
}

export async function withConnection<T>(
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
