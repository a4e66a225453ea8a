import type { SharedStore } from "../shared-store.ts";

/**
 * Token buckets every replica takes from (`mcpproxy.rate_buckets`), so that a server's rate limit,
 * or a principal's quota, holds for all replicas together. One statement refills the bucket from
 * the time elapsed since its last refill and takes a token if there is one, atomically (the row is
 * locked for the statement): no two replicas take the same token. The time is the database's
 * `clock_timestamp()`, so replicas whose clocks disagree share one bucket fairly.
 */
interface BucketLimit {
  perMinute: number;
  burst: number;
}

export interface BucketTake {
  taken: boolean;
  /** Milliseconds until the bucket holds a whole token again (0: it does now). */
  waitMs: number;
  /** Replicas that said they were alive lately, read in the same statement (a local bucket's share). */
  replicas?: number | undefined;
}

export interface RateBucketStore {
  take(key: string, limit: BucketLimit): Promise<BucketTake>;
  /** Replicas that said they were alive lately: a bucket that cannot reach the store holds a share. */
  liveReplicas(): Promise<number>;
  /** Answers when the store does (a cheap query). */
  ping(): Promise<void>;
}

/** A hair under one token counts as one: floating-point refills must not cost a whole extra wait. */
const EPSILON = 1e-9;
/** A replica whose heartbeat (every 10 s) is older than this is not counted as live. */
const LIVE = "30 seconds";

export function rateBucketsOf(store: Pick<SharedStore, "sql">): RateBucketStore {
  const { sql } = store;
  return {
    async take(key, limit) {
      const perMs = limit.perMinute / 60_000;
      const burst = Math.max(1, limit.burst);
      // `level`: the tokens after the refill, capped at the burst. Every SET expression sees the row
      // as it was, so the refill is written out in each.
      const [row] = await sql<{ taken: boolean; tokens: number; replicas: string }[]>`
        INSERT INTO mcpproxy.rate_buckets AS b (key, tokens, refilled_at, taken)
        VALUES (${key}, ${burst - 1}::float8, extract(epoch FROM clock_timestamp()) * 1000, true)
        ON CONFLICT (key) DO UPDATE SET
          tokens = CASE
            WHEN least(${burst}::float8, b.tokens + greatest(0, EXCLUDED.refilled_at - b.refilled_at) * ${perMs}::float8) >= ${1 - EPSILON}
            THEN greatest(0, least(${burst}::float8, b.tokens + greatest(0, EXCLUDED.refilled_at - b.refilled_at) * ${perMs}::float8) - 1)
            ELSE least(${burst}::float8, b.tokens + greatest(0, EXCLUDED.refilled_at - b.refilled_at) * ${perMs}::float8)
          END,
          taken = least(${burst}::float8, b.tokens + greatest(0, EXCLUDED.refilled_at - b.refilled_at) * ${perMs}::float8) >= ${1 - EPSILON},
          refilled_at = greatest(b.refilled_at, EXCLUDED.refilled_at)
        RETURNING taken, tokens, (SELECT count(*) FROM mcpproxy.replicas WHERE seen_at > now() - ${LIVE}::interval) AS replicas`;
      const tokens = Number(row?.tokens ?? 0);
      const missing = 1 - tokens;
      return {
        taken: Boolean(row?.taken),
        waitMs: missing <= EPSILON || perMs <= 0 ? 0 : Math.ceil(missing / perMs),
        replicas: Math.max(1, Number(row?.replicas ?? 1)),
      };
    },
    async liveReplicas() {
      const [row] = await sql<{ n: string }[]>`
        SELECT count(*) AS n FROM mcpproxy.replicas WHERE seen_at > now() - ${LIVE}::interval`;
      return Math.max(1, Number(row?.n ?? 1));
    },
    async ping() {
      await sql`SELECT 1`;
    },
  };
}
