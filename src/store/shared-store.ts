import { randomBytes, randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { describeError, ProxyError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { VERSION } from "../version.ts";
import { CONNECT_TIMEOUT_S, connectPostgres, type Sql, type Tx } from "./postgres/connect.ts";
import { migrate, refuseNewerSchema, schemaStatus } from "./postgres/migrations.ts";
import { type ChangeListener, recordChange, startChangeListener } from "./postgres/store-changes.ts";
import type { StoreKey } from "./store-key.ts";
import { type StoreSecret, storeSecretFrom } from "./store-key-derivation.ts";
import { checkKey, LEGACY_KEY_WARNING, neverSetUp, storeKeyIn } from "./store-key-records.ts";

/**
 * The shared store of a team deployment: one PostgreSQL database that every replica reads and
 * writes (what lives there: postgres/migrations.ts). Opening it migrates the schema (once, under a
 * lock), checks that this replica has the same MCPPROXY_STORE_KEY as the others, registers the
 * replica and starts listening for the others' changes. Only modules in src/store/ touch `sql`.
 */
export interface SharedStore {
  /** The URL as it may be shown (password masked). */
  readonly shown: string;
  /** This replica's id: the origin of its changes. */
  readonly replicaId: string;
  /** The schema steps this opening applied (none when another replica, or `store migrate`, had). */
  readonly migrated: readonly number[];
  readonly key: StoreKey;
  readonly sql: Sql;
  /**
   * A client of one connection of its own (the lease's lock lives as long as its session); named
   * as this replica in pg_stat_activity. The caller ends it.
   */
  connectAlone(): Sql;
  readonly changes: ChangeListener;
  /** Records a change of `kind` in `tx` (a transaction of `sql`); the other replicas hear of it. */
  recordChange(tx: Sql | Tx, kind: string, subject: Record<string, unknown>): Promise<number>;
  /** Records a change that carries no data of its own (a hint), in a transaction of its own. */
  announce(kind: string, subject: Record<string, unknown>): Promise<void>;
  /** The key that seals requestState (MRTR): one for every replica, so any of them opens another's. */
  requestStateKey(): Buffer;
  close(): Promise<void>;
}

export interface SharedStoreOptions {
  url: string;
  shown: string;
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  /**
   * A replica (serve) registers itself and beats; an operator's command (`store init`) only
   * prepares the store and uses it. Default true.
   */
  isReplica?: boolean;
  /**
   * A command that only reads (`search`, `tools`): the store must be set up already (schema, key);
   * opening it migrates nothing and writes nothing. Default false.
   */
  isReadOnly?: boolean;
}

/** How often a replica says it is alive (`store status` shows who is). */
export const HEARTBEAT_MS = 10_000;

const REQUEST_STATE_KEY = "request_state_key";
/** The rows of mcpproxy.meta sealed with the store key (as `meta:<name>`): `store rekey` seals them again. */
export const SEALED_META = [REQUEST_STATE_KEY] as const;
/** What a row of mcpproxy.meta is sealed for. */
export const metaPurpose = (name: string) => `meta:${name}`;

export async function openSharedStore(options: SharedStoreOptions): Promise<SharedStore> {
  // Read (and refused when missing or short) before connecting; the key itself needs the store's parameters.
  const secret = storeSecretFrom(options.env);
  const isReplica = options.isReplica ?? true;
  const replicaId = isReplica
    ? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`
    : `operator-${hostname()}-${process.pid}`;
  const sql = connectPostgres(options.url, {
    logger: options.logger,
    applicationName: `mcpproxy ${replicaId}`,
  });
  let prepared: PreparedStore;
  let changes: ChangeListener;
  try {
    prepared = await prepareSharedStore(sql, secret, options.isReadOnly ?? false);
    if (isReplica)
      await sql`
        INSERT INTO mcpproxy.replicas (id, host, pid, version, started_at, seen_at)
        VALUES (${replicaId}, ${hostname()}, ${process.pid}, ${VERSION}, now(), now())`;
    changes = await startChangeListener(sql, replicaId, options.logger.child("store"));
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw storeUnavailable(options.shown, error);
  }
  const heartbeat = isReplica
    ? setInterval(() => {
        sql`UPDATE mcpproxy.replicas SET seen_at = now() WHERE id = ${replicaId}`.catch(() => {});
      }, HEARTBEAT_MS)
    : undefined;
  heartbeat?.unref?.();
  const { key } = prepared;
  if (key.derivation === "legacy-hkdf") options.logger.warn(LEGACY_KEY_WARNING);
  return {
    shown: options.shown,
    replicaId,
    migrated: prepared.migrated,
    key,
    sql,
    changes,
    recordChange: (tx, kind, subject) => recordChange(tx, replicaId, kind, subject),
    async announce(kind, subject) {
      await sql.begin((tx) => recordChange(tx, replicaId, kind, subject));
    },
    connectAlone: () =>
      connectPostgres(options.url, {
        max: 1,
        logger: options.logger,
        applicationName: `mcpproxy ${replicaId}`,
      }),
    requestStateKey: () => prepared.requestStateKey,
    async close() {
      clearInterval(heartbeat);
      await changes.stop();
      if (isReplica) await sql`DELETE FROM mcpproxy.replicas WHERE id = ${replicaId}`.catch(() => {});
      await sql.end({ timeout: 5 });
    },
  };
}

interface PreparedStore {
  migrated: readonly number[];
  key: StoreKey;
  requestStateKey: Buffer;
}

/**
 * What every opening of the store does, a replica's and `store init`'s alike: the schema brought up
 * to date, the key checked against the store's, the shared secrets made or read.
 */
async function prepareSharedStore(
  sql: Sql,
  secret: StoreSecret,
  isReadOnly: boolean,
): Promise<PreparedStore> {
  if (isReadOnly) await refuseUnprepared(sql);
  const migrated = isReadOnly ? [] : await migrate(sql);
  const key = await storeKeyIn(sql, secret, isReadOnly);
  await checkKey(sql, key, isReadOnly);
  const requestStateKey = await sharedSecret(sql, key, REQUEST_STATE_KEY, () => randomBytes(32), isReadOnly);
  return { migrated, key, requestStateKey };
}

/** A reader's opening: the schema must be this mcpproxy's already (a read never migrates). */
async function refuseUnprepared(sql: Sql): Promise<void> {
  const status = await schemaStatus(sql);
  refuseNewerSchema(status);
  if (status.pending.length > 0)
    throw new ProxyError(
      "CONFIG_INVALID",
      `The shared store is at schema version ${status.current} of ${status.latest}: run \`mcpproxy store migrate\` ` +
        "(or `store init` for a new store) first; a command that only reads never migrates it.",
    );
}

/** Any failure to reach or use the store, as one line that says what to check (a ProxyError stays itself). */
export function storeUnavailable(shown: string, error: unknown): ProxyError {
  if (error instanceof ProxyError) return error;
  // The client's own wording ("write CONNECT_TIMEOUT host:port") does not say what happened.
  const reason =
    (error as { code?: unknown } | undefined)?.code === "CONNECT_TIMEOUT"
      ? `no answer within ${CONNECT_TIMEOUT_S} s`
      : describeError(error);
  return new ProxyError(
    "STORE_UNAVAILABLE",
    `Cannot open the shared store ${shown}: ${reason}. Check that PostgreSQL is ` +
      "running and the URL (--store, MCPPROXY_STORE or mcpproxy.store) names a database this user may write.",
    { cause: error },
  );
}

/** A secret every replica shares, made by the first one that asks, kept sealed with the store key. */
async function sharedSecret(
  sql: Sql,
  key: StoreKey,
  name: string,
  make: () => Buffer,
  isReadOnly: boolean,
): Promise<Buffer> {
  if (!isReadOnly) {
    const sealed = key.seal(make(), metaPurpose(name)).toString("base64");
    await sql`INSERT INTO mcpproxy.meta (key, value) VALUES (${name}, ${sealed}) ON CONFLICT DO NOTHING`;
  }
  const [row] = await sql<{ value: string }[]>`SELECT value FROM mcpproxy.meta WHERE key = ${name}`;
  if (!row) throw isReadOnly ? neverSetUp() : new Error(`the store lost its ${name}`);
  return key.open(Buffer.from(row.value, "base64"), metaPurpose(name));
}
