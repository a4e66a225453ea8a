import { ProxyError } from "../../errors.ts";
import type { Sql, Tx } from "./connect.ts";
import { LOCKS, MCPPROXY_LOCK_SPACE } from "./lock-keys.ts";

/**
 * The shared store's schema, as numbered steps. A step never changes once released: a change is a
 * new step. Everything lives in its own PostgreSQL schema (`mcpproxy`), so the database may be
 * shared with other applications. `migrate` runs the missing steps, each in a transaction, under an
 * advisory lock: replicas that start together migrate once, and the others wait and find it done.
 */
interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const SCHEMA = "mcpproxy";

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "shared state of replicas",
    sql: `
      CREATE TABLE mcpproxy.meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      -- The server registry: each server entry as the config file writes it. The file seeds it.
      CREATE TABLE mcpproxy.servers (
        name TEXT PRIMARY KEY, entry JSONB NOT NULL, updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        updated_by TEXT NOT NULL);
      -- The catalog, as each replica's catalog.db holds it (the same tables and columns).
      CREATE TABLE mcpproxy.tools (
        server TEXT NOT NULL, tool TEXT NOT NULL, name TEXT NOT NULL, hash TEXT NOT NULL,
        definition TEXT NOT NULL, updated_at BIGINT NOT NULL, PRIMARY KEY (server, tool));
      CREATE TABLE mcpproxy.vectors (
        server TEXT NOT NULL, tool TEXT NOT NULL, hash TEXT NOT NULL, vector BYTEA NOT NULL,
        PRIMARY KEY (server, tool));
      CREATE TABLE mcpproxy.approvals (
        server TEXT NOT NULL, tool TEXT NOT NULL, hash TEXT NOT NULL, definition TEXT,
        approved_at BIGINT NOT NULL, PRIMARY KEY (server, tool));
      CREATE TABLE mcpproxy.capabilities (
        server TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL, hash TEXT NOT NULL,
        definition TEXT NOT NULL, PRIMARY KEY (server, kind, name));
      CREATE TABLE mcpproxy.capability_approvals (
        server TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL, hash TEXT NOT NULL,
        definition TEXT, approved_at BIGINT NOT NULL, PRIMARY KEY (server, kind, name));
      CREATE TABLE mcpproxy.server_eras (
        server TEXT PRIMARY KEY, era TEXT NOT NULL, key TEXT NOT NULL, protocol_version TEXT,
        discover TEXT, checked_at BIGINT NOT NULL);
      CREATE TABLE mcpproxy.server_instructions (
        server TEXT PRIMARY KEY, instructions TEXT NOT NULL, seen_at BIGINT NOT NULL);
      -- Every change, in commit order: NOTIFY carries its id, and a replica that was away (a
      -- restart of PostgreSQL, a lost connection) reads what it missed from here.
      CREATE TABLE mcpproxy.changes (
        id BIGSERIAL PRIMARY KEY, kind TEXT NOT NULL, subject JSONB NOT NULL, origin TEXT NOT NULL,
        at TIMESTAMPTZ NOT NULL DEFAULT now());
      -- Call statistics: each replica its own tallies (merged when read), per tool and principal.
      CREATE TABLE mcpproxy.tool_stats (
        replica TEXT NOT NULL, server TEXT NOT NULL, tool TEXT NOT NULL, principal TEXT NOT NULL DEFAULT '',
        tally JSONB NOT NULL, updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (replica, server, tool, principal));
      CREATE TABLE mcpproxy.rerank_stats (
        replica TEXT NOT NULL, model TEXT NOT NULL, tally JSONB NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (replica, model));
      -- Rate limits held across replicas: one token bucket per server (or principal). The time is
      -- the database's (ms since the epoch), so the replicas' clocks play no part; \`taken\` says
      -- whether the last statement took a token (postgres/rate-buckets.ts).
      CREATE TABLE mcpproxy.rate_buckets (
        key TEXT PRIMARY KEY, tokens DOUBLE PRECISION NOT NULL, refilled_at DOUBLE PRECISION NOT NULL,
        taken BOOLEAN NOT NULL DEFAULT true);
      -- OAuth logins of upstream servers (oauth-records.ts): the whole record sealed with
      -- MCPPROXY_STORE_KEY (store-key.ts), its URL included (a URL may carry a key); nothing in clear.
      CREATE TABLE mcpproxy.oauth_records (
        server TEXT PRIMARY KEY, sealed BYTEA NOT NULL, updated_at TIMESTAMPTZ NOT NULL DEFAULT now());
      -- Large tool results of 2026-07-28 clients (kept-results.ts), so any replica serves their pages:
      -- owner is a digest of the principal, data the result (UTF-16 code units of a text, bytes of a
      -- blob) encrypted with a key derived from MCPPROXY_STORE_KEY in a mode that opens any slice
      -- alone. EXTERNAL storage (not compressed): substring() then reads only a page's slice.
      CREATE TABLE mcpproxy.kept_results (
        id TEXT PRIMARY KEY, seq BIGSERIAL NOT NULL, owner BYTEA NOT NULL, kind TEXT NOT NULL,
        mime_type TEXT NOT NULL, bytes BIGINT NOT NULL, iv BYTEA NOT NULL, data BYTEA NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL);
      ALTER TABLE mcpproxy.kept_results ALTER COLUMN data SET STORAGE EXTERNAL;
      CREATE INDEX kept_results_owner ON mcpproxy.kept_results (owner, seq);
      CREATE INDEX kept_results_expiry ON mcpproxy.kept_results (expires_at);
      -- Who is serving: for \`mcpproxy store status\`.
      CREATE TABLE mcpproxy.replicas (
        id TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL, version TEXT NOT NULL,
        started_at TIMESTAMPTZ NOT NULL, seen_at TIMESTAMPTZ NOT NULL);`,
  },
];

const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

export interface SchemaStatus {
  /** The version the store is at (0: never migrated). */
  current: number;
  latest: number;
  pending: readonly Migration[];
  applied: readonly { version: number; name: string; appliedAt: Date }[];
}

async function ensureLedger(sql: Sql | Tx): Promise<void> {
  await sql
    .unsafe(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA};
      CREATE TABLE IF NOT EXISTS ${SCHEMA}.schema_migrations (
        version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`)
    .simple();
}

export async function schemaStatus(sql: Sql | Tx): Promise<SchemaStatus> {
  const [exists] = await sql`SELECT to_regclass('mcpproxy.schema_migrations') AS ledger`;
  const rows = exists?.ledger
    ? await sql<{ version: number; name: string; applied_at: Date }[]>`
        SELECT version, name, applied_at FROM mcpproxy.schema_migrations ORDER BY version`
    : [];
  const current = rows.reduce((top, row) => Math.max(top, row.version), 0);
  return {
    current,
    latest: LATEST_VERSION,
    pending: MIGRATIONS.filter((m) => !rows.some((row) => row.version === m.version)),
    applied: rows.map((row) => ({ version: row.version, name: row.name, appliedAt: row.applied_at })),
  };
}

/** A store a newer mcpproxy migrated: this one does not know its tables and must not write them. */
export function refuseNewerSchema(status: SchemaStatus): void {
  if (status.current > status.latest)
    throw new ProxyError(
      "CONFIG_INVALID",
      `The shared store is at schema version ${status.current}, newer than this mcpproxy knows ` +
        `(${status.latest}): upgrade mcpproxy on this machine.`,
    );
}

/**
 * Runs the missing steps under the migrations lock, in one transaction: replicas starting at once
 * migrate one after the other (the later ones find nothing to do), and a step that fails leaves the
 * schema as it was. Returns the versions applied by this call.
 */
export async function migrate(sql: Sql): Promise<number[]> {
  return sql.begin(async (tx) => {
    const applied: number[] = [];
    await tx`SELECT pg_advisory_xact_lock(${MCPPROXY_LOCK_SPACE}, ${LOCKS.migrations})`;
    await ensureLedger(tx);
    const status = await schemaStatus(tx);
    refuseNewerSchema(status);
    for (const step of status.pending) {
      await tx.unsafe(step.sql).simple();
      await tx`INSERT INTO mcpproxy.schema_migrations (version, name) VALUES (${step.version}, ${step.name})`;
      applied.push(step.version);
    }
    return applied;
  });
}
