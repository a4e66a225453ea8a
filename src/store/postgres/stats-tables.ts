import type { SharedStore } from "../shared-store.ts";
import type { Sql } from "./connect.ts";
import { LOCKS, MCPPROXY_LOCK_SPACE } from "./lock-keys.ts";

/**
 * Call statistics in the shared store: each replica adds its own counts to its own rows of
 * `mcpproxy.tool_stats` (per server, tool and principal; '' is every caller) and
 * `mcpproxy.rerank_stats` (per chat model), and readers merge every replica's rows. A tally is
 * opaque here (JSON): the caller says how two are added (src/stats/tally.ts). A row holds a tally,
 * not calls, so the tables grow with tools × principals × replicas, never with calls; rows of
 * replicas that are gone are folded into replica '' (`compact`).
 */
type MergeTallies = (stored: unknown, delta: unknown) => unknown;

export interface StatsRow {
  replica: string;
  server: string;
  tool: string;
  principal: string;
  tally: unknown;
}

interface RerankRow {
  replica: string;
  model: string;
  tally: unknown;
}

export interface StatsFilter {
  server?: string | undefined;
  tool?: string | undefined;
}

/** The change a reset or a compaction announces: every replica reads the tables afresh. */
export const STATS_CHANGE = "stats";

export interface StatsTables {
  readonly replicaId: string;
  /**
   * Adds `deltas` to this replica's rows in one transaction (each row locked while it is read and
   * written, so a reset in between is not undone); resolves to the tallies now stored.
   */
  addOwn(
    deltas: readonly Omit<StatsRow, "replica">[],
    reranks: readonly Omit<RerankRow, "replica">[],
    merge: { tools: MergeTallies; reranks: MergeTallies },
  ): Promise<{ rows: StatsRow[]; reranks: RerankRow[] }>;
  /**
   * Rows changed since `since` (the `at` of an earlier read; all of them without it), and the
   * database's clock to pass next time: the replicas' own clocks play no part.
   */
  read(since?: number): Promise<{ rows: StatsRow[]; reranks: RerankRow[]; at: number }>;
  /** Deletes every replica's rows matching `filter` (all without one) and tells the replicas. */
  reset(filter: StatsFilter): Promise<number>;
  /**
   * Folds the rows of replicas gone for `goneMs` into replica ''; one replica does it at a time
   * (an advisory lock tried, not waited for). Resolves to the rows folded.
   */
  compact(merge: MergeTallies, goneMs?: number): Promise<number>;
}

/** Rows a delta read may have missed: written in a transaction that committed this late. */
const READ_OVERLAP_MS = 5_000;
/** Rows written by one statement. */
const CHUNK = 1_000;
/** A replica not seen for this long (its heartbeat is 10 s) has its rows folded. */
const GONE_MS = 120_000;

export function statsTablesOf(store: Pick<SharedStore, "sql" | "replicaId" | "recordChange">): StatsTables {
  const { sql, replicaId } = store;
  return {
    replicaId,
    async addOwn(deltas, reranks, merge) {
      return sql.begin(async (tx) => {
        const rows: StatsRow[] = [];
        // In chunks of whole statements (one read, one write), not a round trip a row: a replica
        // back from a long outage may write every tool at once.
        for (let at = 0; at < deltas.length; at += CHUNK) {
          const chunk = deltas.slice(at, at + CHUNK);
          const stored = await tx<{ server: string; tool: string; principal: string; tally: unknown }[]>`
            SELECT s.server, s.tool, s.principal, s.tally FROM mcpproxy.tool_stats s
            JOIN jsonb_to_recordset(${tx.json(chunk.map(({ server, tool, principal }) => ({ server, tool, principal })) as never)})
              AS k(server text, tool text, principal text)
              ON s.server = k.server AND s.tool = k.tool AND s.principal = k.principal
            WHERE s.replica = ${replicaId}
            FOR UPDATE OF s`;
          const before = new Map(
            stored.map((row) => [`${row.server}\u0000${row.tool}\u0000${row.principal}`, row.tally]),
          );
          const written = chunk.map((d) => {
            const base = before.get(`${d.server}\u0000${d.tool}\u0000${d.principal}`);
            return {
              server: d.server,
              tool: d.tool,
              principal: d.principal,
              tally: base ? merge.tools(base, d.tally) : d.tally,
            };
          });
          await tx`
            INSERT INTO mcpproxy.tool_stats (replica, server, tool, principal, tally, updated_at)
            SELECT ${replicaId}, w.server, w.tool, w.principal, w.tally, clock_timestamp()
            FROM jsonb_to_recordset(${tx.json(written as never)}) AS w(server text, tool text, principal text, tally jsonb)
            ON CONFLICT (replica, server, tool, principal)
            DO UPDATE SET tally = EXCLUDED.tally, updated_at = EXCLUDED.updated_at`;
          for (const row of written) rows.push({ replica: replicaId, ...row });
        }
        const written: RerankRow[] = [];
        for (const r of reranks) {
          const [row] = await tx<{ tally: unknown }[]>`
            SELECT tally FROM mcpproxy.rerank_stats WHERE replica = ${replicaId} AND model = ${r.model} FOR UPDATE`;
          const tally = row ? merge.reranks(row.tally, r.tally) : r.tally;
          await tx`
            INSERT INTO mcpproxy.rerank_stats (replica, model, tally, updated_at)
            VALUES (${replicaId}, ${r.model}, ${tx.json(tally as never)}, clock_timestamp())
            ON CONFLICT (replica, model) DO UPDATE SET tally = EXCLUDED.tally, updated_at = EXCLUDED.updated_at`;
          written.push({ replica: replicaId, model: r.model, tally });
        }
        return { rows, reranks: written };
      }) as Promise<{ rows: StatsRow[]; reranks: RerankRow[] }>;
    },
    async read(since) {
      const [clock] = await sql<{ at: number }[]>`
        SELECT extract(epoch FROM clock_timestamp()) * 1000 AS at`;
      const from = since === undefined ? 0 : since - READ_OVERLAP_MS;
      const rows = await sql<StatsRow[]>`
        SELECT replica, server, tool, principal, tally FROM mcpproxy.tool_stats
        WHERE updated_at >= to_timestamp(${from / 1000})`;
      const reranks = await sql<RerankRow[]>`
        SELECT replica, model, tally FROM mcpproxy.rerank_stats WHERE updated_at >= to_timestamp(${from / 1000})`;
      return { rows: [...rows], reranks: [...reranks], at: Number(clock?.at ?? 0) };
    },
    async reset(filter) {
      return sql.begin(async (tx) => {
        const deleted = await tx<{ server: string; tool: string }[]>`
          DELETE FROM mcpproxy.tool_stats
          WHERE (${filter.server ?? null}::text IS NULL OR server = ${filter.server ?? null})
            AND (${filter.tool ?? null}::text IS NULL OR tool = ${filter.tool ?? null})
          RETURNING server, tool`;
        // The chat model's figures belong to no server: cleared with everything.
        if (!filter.server && !filter.tool) await tx`DELETE FROM mcpproxy.rerank_stats`;
        await store.recordChange(tx as unknown as Sql, STATS_CHANGE, { op: "reset", ...filter });
        return new Set(deleted.map((row) => `${row.server}\u0000${row.tool}`)).size;
      }) as Promise<number>;
    },
    async compact(merge, goneMs = GONE_MS) {
      return sql.begin(async (tx) => {
        const [lock] = await tx<{ held: boolean }[]>`
          SELECT pg_try_advisory_xact_lock(${MCPPROXY_LOCK_SPACE}, ${LOCKS.statsCompaction}) AS held`;
        if (!lock?.held) return 0;
        const gone = await tx<StatsRow[]>`
          DELETE FROM mcpproxy.tool_stats s WHERE s.replica <> '' AND NOT EXISTS (
            SELECT 1 FROM mcpproxy.replicas r
            WHERE r.id = s.replica AND r.seen_at > now() - make_interval(secs => ${goneMs / 1000}))
          RETURNING replica, server, tool, principal, tally`;
        const folded = new Map<string, StatsRow>();
        for (const row of gone) {
          const k = `${row.server}\u0000${row.tool}\u0000${row.principal}`;
          const into = folded.get(k);
          folded.set(k, into ? { ...into, tally: merge(into.tally, row.tally) } : { ...row, replica: "" });
        }
        for (const row of folded.values()) {
          const [base] = await tx<{ tally: unknown }[]>`
            SELECT tally FROM mcpproxy.tool_stats
            WHERE replica = '' AND server = ${row.server} AND tool = ${row.tool} AND principal = ${row.principal}
            FOR UPDATE`;
          const tally = base ? merge(base.tally, row.tally) : row.tally;
          await tx`
            INSERT INTO mcpproxy.tool_stats (replica, server, tool, principal, tally, updated_at)
            VALUES ('', ${row.server}, ${row.tool}, ${row.principal}, ${tx.json(tally as never)}, clock_timestamp())
            ON CONFLICT (replica, server, tool, principal)
            DO UPDATE SET tally = EXCLUDED.tally, updated_at = EXCLUDED.updated_at`;
        }
        if (gone.length > 0)
          await store.recordChange(tx as unknown as Sql, STATS_CHANGE, {
            op: "compacted",
            rows: gone.length,
          });
        return gone.length;
      }) as Promise<number>;
    },
  };
}
