import type { Database } from "bun:sqlite";

/**
 * Which protocol era each server spoke when the proxy last connected to it (issue 22: MCP
 * 2026-07-28 beside 2025-11-25), kept in the catalog file so the next connect skips the probe:
 * a modern server with its `server/discover` result (what the SDK's `connect({ prior })` needs),
 * a legacy one without. Dated, and tied to what the server is (`key`: its command or URL), so
 * another program under the same name is judged again. A verdict that fails is judged again by
 * the connect that found it failing (upstream/era-negotiation.ts).
 */
export interface EraVerdict {
  era: "modern" | "legacy";
  /** What the server was when judged (upstream/era-negotiation.ts `eraKey`). */
  key: string;
  /** The protocol version it settled on. */
  protocolVersion?: string | undefined;
  /** A modern server's `server/discover` result, as it sent it. */
  discover?: Record<string, unknown> | undefined;
  /** When it was judged (ms since the epoch). */
  checkedAt: number;
}

export interface EraStore {
  get(server: string): EraVerdict | undefined;
  put(server: string, verdict: EraVerdict): void;
  /** Drops the verdicts of the servers not in `keep` (servers removed from the config). */
  forgetExcept(keep: ReadonlySet<string>): void;
}

/** A discover result larger than this is not kept (the server is probed on every connect instead). */
const MAX_STORED_DISCOVER_BYTES = 64 * 1024;

export function createEraSchema(db: Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS server_eras (
      server TEXT PRIMARY KEY, era TEXT NOT NULL, key TEXT NOT NULL, protocol_version TEXT,
      discover TEXT, checked_at INTEGER NOT NULL);`);
}

interface EraRow {
  era: string;
  key: string;
  protocol_version: string | null;
  discover: string | null;
  checked_at: number;
}

/**
 * `writable`: verdicts are written to the file; otherwise (a read-only catalog: a second serve,
 * `search`) they are kept in memory for the life of the process, over what the file holds.
 */
export function openEraStore(db: Database, options: { writable: boolean }): EraStore {
  const hasTable = () =>
    Boolean(db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'server_eras'").get());
  const isStored = hasTable();
  const memory = new Map<string, EraVerdict>();
  const select = isStored
    ? db.query<EraRow, [string]>(
        "SELECT era, key, protocol_version, discover, checked_at FROM server_eras WHERE server = ?",
      )
    : undefined;

  return {
    get(server) {
      if (memory.has(server)) return memory.get(server);
      const row = select?.get(server);
      if (!row || (row.era !== "modern" && row.era !== "legacy")) return undefined;
      let discover: Record<string, unknown> | undefined;
      if (row.discover !== null) {
        try {
          discover = JSON.parse(row.discover) as Record<string, unknown>;
        } catch {
          return undefined; // a damaged row is no verdict: the server is probed again
        }
      }
      return {
        era: row.era,
        key: row.key,
        ...(row.protocol_version ? { protocolVersion: row.protocol_version } : {}),
        ...(discover ? { discover } : {}),
        checkedAt: row.checked_at,
      };
    },
    put(server, verdict) {
      const discover = verdict.discover ? JSON.stringify(verdict.discover) : null;
      if (discover && discover.length > MAX_STORED_DISCOVER_BYTES) return;
      if (!(options.writable && isStored)) {
        memory.set(server, verdict);
        return;
      }
      db.run(
        `INSERT INTO server_eras (server, era, key, protocol_version, discover, checked_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (server) DO UPDATE SET era = excluded.era, key = excluded.key,
           protocol_version = excluded.protocol_version, discover = excluded.discover, checked_at = excluded.checked_at`,
        [server, verdict.era, verdict.key, verdict.protocolVersion ?? null, discover, verdict.checkedAt],
      );
    },
    forgetExcept(keep) {
      for (const server of [...memory.keys()]) if (!keep.has(server)) memory.delete(server);
      if (!(options.writable && isStored)) return;
      const stored = db
        .query<{ server: string }, []>("SELECT server FROM server_eras")
        .all()
        .filter((row) => !keep.has(row.server));
      if (stored.length === 0) return;
      db.transaction(() => {
        for (const row of stored) db.run("DELETE FROM server_eras WHERE server = ?", [row.server]);
      }).immediate();
    },
  };
}

/** Verdicts for the life of the process only (a pool without a catalog, such as doctor's or a test's). */
export function createMemoryEraStore(): EraStore {
  const verdicts = new Map<string, EraVerdict>();
  return {
    get: (server) => verdicts.get(server),
    put: (server, verdict) => void verdicts.set(server, verdict),
    forgetExcept(keep) {
      for (const server of [...verdicts.keys()]) if (!keep.has(server)) verdicts.delete(server);
    },
  };
}
