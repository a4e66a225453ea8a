import { createCipheriv, createHash, randomBytes } from "node:crypto";
import type { SharedStore } from "../shared-store.ts";
import { LOCKS, MCPPROXY_LOCK_SPACE } from "./lock-keys.ts";

/**
 * Large tool results kept in the shared store (`mcpproxy.kept_results`), so that a 2026-07-28
 * client's next request, which the load balancer may send to any replica, reads the pages of a
 * result another replica kept (src/server/results/shared-results.ts decides what goes here).
 *
 * A row is read a slice at a time, never whole: `data` is stored uncompressed (EXTERNAL), so
 * PostgreSQL's substring() fetches only the TOAST chunks of the slice. It is encrypted (a result
 * holds whatever the tool read) with AES-256-CTR under a key derived from MCPPROXY_STORE_KEY and a
 * random IV per row: a counter mode, so any 16-byte-aligned slice is opened alone. The owner is a
 * SHA-256 digest of the principal, never its name; a row read by another owner, or after
 * `expires_at` (the database's clock: the replicas' clocks play no part), is not there.
 */
interface KeptRow {
  id: string;
  /** Who may read it back (the principal's scope): stored as a digest. */
  owner: string;
  kind: "text" | "blob";
  mimeType: string;
  /** UTF-8 bytes of a text, bytes of a blob: what the bounds count, as in memory. */
  bytes: number;
  /** The stored form: a text's UTF-16 code units (little-endian), a blob's bytes. */
  data: Buffer;
}

export interface KeptBounds {
  ttlMs: number;
  perOwner: number;
  ownerBytes: number;
  totalBytes: number;
}

/** A byte range of the stored form, [from, to). */
interface StoredRange {
  from: number;
  to: number;
}

interface KeptSlice {
  kind: "text" | "blob";
  mimeType: string;
  bytes: number;
  /** Length of the whole stored form. */
  stored: number;
  /** When it expires, ms since the epoch (the database's clock). */
  expiresAt: number;
  /** The range asked for (the one of the row's kind), cut at the end of the stored form. */
  from: number;
  data: Buffer;
}

export interface KeptResultsTable {
  /** Keeps `row`, then evicts the oldest of its owner and of the whole table beyond the bounds. */
  put(row: KeptRow, bounds: KeptBounds): Promise<void>;
  /**
   * The range of its kind (`ranges.text` or `ranges.blob`: the caller does not know which it is yet)
   * of row `id` if it is `owner`'s and has not expired; undefined otherwise. One round trip.
   */
  slice(
    id: string,
    owner: string,
    ranges: Record<"text" | "blob", StoredRange>,
  ): Promise<KeptSlice | undefined>;
  /** Deletes the expired rows, unless another replica is at it; returns how many. */
  sweep(): Promise<number>;
}

const BLOCK = 16;
const ownerDigest = (owner: string) => createHash("sha256").update(`kept-results:${owner}`).digest();

/** The CTR counter block of byte `at`: 8 random bytes, then the block number (never wraps into them). */
function counterAt(iv: Buffer, at: number): Buffer {
  const counter = Buffer.alloc(BLOCK);
  iv.copy(counter, 0, 0, 8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / BLOCK)), 8);
  return counter;
}

/** Encrypts or decrypts (CTR is its own inverse) `data`, which starts at byte `at` (a multiple of 16). */
function crypt(key: Buffer, iv: Buffer, at: number, data: Buffer): Buffer {
  const cipher = createCipheriv("aes-256-ctr", key, counterAt(iv, at));
  return Buffer.concat([cipher.update(data), cipher.final()]);
}

export function keptResultsOf(store: Pick<SharedStore, "sql" | "key">): KeptResultsTable {
  const { sql } = store;
  const key = store.key.subkey("kept-results");
  return {
    async put(row, bounds) {
      const owner = ownerDigest(row.owner);
      const iv = Buffer.concat([randomBytes(8), Buffer.alloc(8)]);
      const data = crypt(key, iv, 0, row.data);
      await sql.begin(async (tx) => {
        await tx`
          INSERT INTO mcpproxy.kept_results (id, owner, kind, mime_type, bytes, iv, data, expires_at)
          VALUES (${row.id}, ${owner}, ${row.kind}, ${row.mimeType}, ${row.bytes}, ${iv}, ${data},
                  now() + ${bounds.ttlMs} * interval '1 millisecond')`;
        // The data went in before the lock: evictions wait for each other, never for a large insert.
        await tx`SELECT pg_advisory_xact_lock(${MCPPROXY_LOCK_SPACE}, ${LOCKS.keptResults})`;
        await tx`DELETE FROM mcpproxy.kept_results WHERE owner = ${owner} AND expires_at <= now()`;
        // Counted newest first, the rows past a bound are the oldest: what eviction drops first.
        await tx`
          DELETE FROM mcpproxy.kept_results WHERE id IN (
            SELECT id FROM (
              SELECT id, row_number() OVER newest AS n, sum(bytes) OVER newest AS held
              FROM mcpproxy.kept_results WHERE owner = ${owner} WINDOW newest AS (ORDER BY seq DESC)
            ) counted WHERE n > ${bounds.perOwner} OR held > ${bounds.ownerBytes})`;
        await tx`
          DELETE FROM mcpproxy.kept_results WHERE id IN (
            SELECT id FROM (SELECT id, sum(bytes) OVER (ORDER BY seq DESC) AS held FROM mcpproxy.kept_results) counted
            WHERE held > ${bounds.totalBytes})`;
      });
    },
    async slice(id, owner, ranges) {
      // Both ranges start on a cipher block: the slice is then opened alone.
      const aligned = (range: StoredRange) => range.from - (range.from % BLOCK);
      const [text, blob] = [ranges.text, ranges.blob];
      const [row] = await sql<
        {
          kind: "text" | "blob";
          mime_type: string;
          bytes: string;
          stored: number;
          iv: Buffer;
          expires_ms: number;
          slice: Buffer;
        }[]
      >`
        SELECT kind, mime_type, bytes, octet_length(data) AS stored, iv,
               (extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms,
               substring(data
                 FROM (CASE WHEN kind = 'text' THEN ${aligned(text)}::int ELSE ${aligned(blob)}::int END) + 1
                 FOR (CASE WHEN kind = 'text' THEN ${text.to - aligned(text)}::int
                           ELSE ${blob.to - aligned(blob)}::int END)) AS slice
        FROM mcpproxy.kept_results
        WHERE id = ${id} AND owner = ${ownerDigest(owner)} AND expires_at > now()`;
      if (!row) return undefined;
      const range = row.kind === "text" ? text : blob;
      const start = aligned(range);
      const plain = crypt(key, row.iv, start, row.slice);
      return {
        kind: row.kind,
        mimeType: row.mime_type,
        bytes: Number(row.bytes),
        stored: row.stored,
        expiresAt: row.expires_ms,
        from: Math.min(range.from, row.stored),
        data: plain.subarray(Math.min(range.from - start, plain.length)),
      };
    },
    async sweep() {
      return sql.begin(async (tx) => {
        const [lock] = await tx<{ got: boolean }[]>`
          SELECT pg_try_advisory_xact_lock(${MCPPROXY_LOCK_SPACE}, ${LOCKS.keptResults}) AS got`;
        if (!lock?.got) return 0;
        const deleted = await tx`DELETE FROM mcpproxy.kept_results WHERE expires_at <= now()`;
        return deleted.count;
      });
    },
  };
}
