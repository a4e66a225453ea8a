import type { Sql } from "./connect.ts";
import { LOCKS, MCPPROXY_LOCK_SPACE } from "./lock-keys.ts";
import { SCHEMA, type SchemaStatus, schemaStatus } from "./migrations.ts";

/**
 * What `mcpproxy store status` reports: the schema's version, who is serving and who holds the
 * locks, how much is kept, and the last change. Read-only: it never migrates or writes.
 */
export interface StoreReport {
  schema: {
    current: number;
    latest: number;
    pending: { version: number; name: string }[];
    applied: { version: number; name: string; appliedAt: string }[];
  };
  /** Empty until the schema exists (version 0). */
  replicas: ReplicaRow[];
  locks: LockRow[];
  counts?: { servers: number; tools: number; approvals: number; changes: number };
  size: { databaseBytes: number; schemaBytes: number; tables: Record<string, number> };
  lastChange?: { id: number; kind: string; at: string; ageSeconds: number };
}

interface ReplicaRow {
  id: string;
  host: string;
  pid: number;
  version: string;
  startedAt: string;
  seenAt: string;
  seenSecondsAgo: number;
  /** Seen within three heartbeats: serving, as far as the store can tell. */
  isAlive: boolean;
}

interface LockRow {
  /** The lock's name in lock-keys.ts (`lease`, `migrations`, …). */
  name: string;
  /** The replica holding it (from its connection's application_name), or the raw name. */
  holder: string;
  pid: number;
}

const APPLICATION_PREFIX = "mcpproxy ";

export async function readStoreReport(sql: Sql, heartbeatMs: number): Promise<StoreReport> {
  const schema = await schemaStatus(sql);
  const hasTables = schema.current >= 1;
  const [replicas, locks, counts, size, lastChange] = await Promise.all([
    hasTables ? readReplicas(sql, heartbeatMs) : [],
    readLocks(sql),
    hasTables ? readCounts(sql) : undefined,
    readSize(sql),
    hasTables ? readLastChange(sql) : undefined,
  ]);
  return {
    schema: {
      current: schema.current,
      latest: schema.latest,
      pending: schema.pending.map(({ version, name }) => ({ version, name })),
      applied: applied(schema),
    },
    replicas,
    locks,
    ...(counts ? { counts } : {}),
    size,
    ...(lastChange ? { lastChange } : {}),
  };
}

function applied(schema: SchemaStatus): StoreReport["schema"]["applied"] {
  return schema.applied.map((a) => ({
    version: a.version,
    name: a.name,
    appliedAt: a.appliedAt.toISOString(),
  }));
}

async function readReplicas(sql: Sql, heartbeatMs: number): Promise<ReplicaRow[]> {
  const rows = await sql<
    { id: string; host: string; pid: number; version: string; started_at: Date; seen_at: Date; ago: number }[]
  >`
    SELECT id, host, pid, version, started_at, seen_at,
      extract(epoch FROM now() - seen_at)::float8 AS ago
    FROM mcpproxy.replicas ORDER BY started_at, id`;
  return rows.map((row) => ({
    id: row.id,
    host: row.host,
    pid: row.pid,
    version: row.version,
    startedAt: row.started_at.toISOString(),
    seenAt: row.seen_at.toISOString(),
    seenSecondsAgo: Math.max(0, Math.round(row.ago)),
    isAlive: row.ago * 1000 <= 3 * heartbeatMs,
  }));
}

/** The replica holding the lease now (as its connection names it), or undefined when none does. */
export async function readLeaseHolder(sql: Sql): Promise<string | undefined> {
  return (await readLocks(sql)).find((lock) => lock.name === "lease")?.holder;
}

/** Advisory locks in mcpproxy's space (the two-number form: classid, objid, objsubid = 2). */
async function readLocks(sql: Sql): Promise<LockRow[]> {
  const rows = await sql<{ objid: number; pid: number; application_name: string | null }[]>`
    SELECT l.objid::int8 AS objid, l.pid, a.application_name
    FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
      AND l.classid = ${MCPPROXY_LOCK_SPACE}::int8::oid
    ORDER BY l.objid, l.pid`;
  const names = new Map(Object.entries(LOCKS).map(([name, id]) => [Number(id), name]));
  return rows.map((row) => {
    const application = row.application_name ?? "";
    return {
      name: names.get(Number(row.objid)) ?? `lock ${row.objid}`,
      holder: application.startsWith(APPLICATION_PREFIX)
        ? application.slice(APPLICATION_PREFIX.length)
        : application || `pid ${row.pid}`,
      pid: row.pid,
    };
  });
}

async function readCounts(sql: Sql): Promise<NonNullable<StoreReport["counts"]>> {
  const [row] = await sql<{ servers: string; tools: string; approvals: string; changes: string }[]>`
    SELECT (SELECT count(*) FROM mcpproxy.servers) AS servers,
      (SELECT count(*) FROM mcpproxy.tools) AS tools,
      (SELECT count(*) FROM mcpproxy.approvals) + (SELECT count(*) FROM mcpproxy.capability_approvals) AS approvals,
      (SELECT count(*) FROM mcpproxy.changes) AS changes`;
  return {
    servers: Number(row?.servers ?? 0),
    tools: Number(row?.tools ?? 0),
    approvals: Number(row?.approvals ?? 0),
    changes: Number(row?.changes ?? 0),
  };
}

async function readSize(sql: Sql): Promise<StoreReport["size"]> {
  const [database] = await sql<{ bytes: string }[]>`
    SELECT pg_database_size(current_database()) AS bytes`;
  const tables = await sql<{ name: string; bytes: string }[]>`
    SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = ${SCHEMA} AND c.relkind = 'r'
    ORDER BY pg_total_relation_size(c.oid) DESC, c.relname`;
  return {
    databaseBytes: Number(database?.bytes ?? 0),
    schemaBytes: tables.reduce((sum, table) => sum + Number(table.bytes), 0),
    tables: Object.fromEntries(tables.map((table) => [table.name, Number(table.bytes)])),
  };
}

async function readLastChange(sql: Sql): Promise<StoreReport["lastChange"]> {
  const [row] = await sql<{ id: string; kind: string; at: Date; ago: number }[]>`
    SELECT id, kind, at, extract(epoch FROM now() - at)::float8 AS ago
    FROM mcpproxy.changes ORDER BY id DESC LIMIT 1`;
  if (!row) return undefined;
  return { id: Number(row.id), kind: row.kind, at: row.at.toISOString(), ageSeconds: Math.round(row.ago) };
}
