import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createPrivateFile } from "../../atomic-file.ts";

/**
 * `<data dir>/stats.db` (SQLite, WAL): the call statistics' tallies, one row per tool, per
 * principal and tool, and per chat model, each stored as the JSON text the statistics
 * (src/stats/call-stats.ts) make and read. This module knows the tables, not what a tally holds:
 * a write hands each row's stored text to the caller, who returns the new one.
 */
export const STATS_FILE = "stats.db";

export interface StoredTally {
  server: string;
  tool: string;
  /** The tally as stored (JSON). */
  tally: string;
}

/** A row to write: its new text, made from the text stored now (undefined when there is none). */
interface TallyUpdate<Key> {
  key: Key;
  update(stored: string | undefined): string;
}

export interface StatsDb {
  readonly path: string;
  tools(): StoredTally[];
  tool(server: string, tool: string): string | undefined;
  ofPrincipal(principal: string): StoredTally[];
  reranks(): { model: string; tally: string }[];
  /** Every update in one transaction: all of them are written, or none (a full disk). */
  write(batch: {
    tools: Iterable<TallyUpdate<{ server: string; tool: string }>>;
    principals: Iterable<TallyUpdate<{ principal: string; server: string; tool: string }>>;
    reranks: Iterable<TallyUpdate<{ model: string }>>;
  }): void;
  /** Deletes a tool's rows, its principals' included. */
  deleteTool(server: string, tool: string): void;
  deleteReranks(): void;
  close(): void;
}

const TABLES = `
CREATE TABLE IF NOT EXISTS tool_stats (
  server TEXT NOT NULL, tool TEXT NOT NULL, tally TEXT NOT NULL, PRIMARY KEY (server, tool));
CREATE TABLE IF NOT EXISTS rerank_stats (model TEXT PRIMARY KEY, tally TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS principal_stats (
  principal TEXT NOT NULL, server TEXT NOT NULL, tool TEXT NOT NULL, tally TEXT NOT NULL,
  PRIMARY KEY (principal, server, tool));`;

/** Opens the data dir's stats.db to write, creating it (0600 whatever the umask: it holds what tools were called and how they failed). */
export function openStatsDb(dataDir: string): StatsDb {
  const path = join(dataDir, STATS_FILE);
  createPrivateFile(path);
  const db = new Database(path, { create: true });
  // The wait first: switching to WAL takes a lock that another process may hold.
  db.exec("PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL;");
  db.exec(TABLES);
  return statsDbOf(db, path);
}

/** The data dir's stats.db to read only (another process writes it); undefined when there is none yet. */
export function readStatsDb(dataDir: string): StatsDb | undefined {
  const path = join(dataDir, STATS_FILE);
  return existsSync(path) ? statsDbOf(new Database(path, { readonly: true }), path) : undefined;
}

function statsDbOf(db: Database, path: string): StatsDb {
  // A file written by an older mcpproxy may lack the later tables: read as empty.
  const hasTable = (name: string) =>
    db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== null;
  const rows = <Row>(table: string, sql: string, ...params: string[]): Row[] =>
    hasTable(table) ? (db.query(sql).all(...params) as Row[]) : [];
  return {
    path,
    tools: () => rows<StoredTally>("tool_stats", "SELECT server, tool, tally FROM tool_stats"),
    tool(server, tool) {
      const row = db
        .query("SELECT tally FROM tool_stats WHERE server = ? AND tool = ?")
        .get(server, tool) as {
        tally: string;
      } | null;
      return row?.tally;
    },
    ofPrincipal: (principal) =>
      rows<StoredTally>(
        "principal_stats",
        "SELECT server, tool, tally FROM principal_stats WHERE principal = ?",
        principal,
      ),
    reranks: () =>
      rows<{ model: string; tally: string }>("rerank_stats", "SELECT model, tally FROM rerank_stats"),
    write(batch) {
      const readTool = db.query("SELECT tally FROM tool_stats WHERE server = ? AND tool = ?");
      const writeTool = db.query("INSERT OR REPLACE INTO tool_stats (server, tool, tally) VALUES (?, ?, ?)");
      const readOwn = db.query(
        "SELECT tally FROM principal_stats WHERE principal = ? AND server = ? AND tool = ?",
      );
      const writeOwn = db.query(
        "INSERT OR REPLACE INTO principal_stats (principal, server, tool, tally) VALUES (?, ?, ?, ?)",
      );
      const readRerank = db.query("SELECT tally FROM rerank_stats WHERE model = ?");
      const writeRerank = db.query("INSERT OR REPLACE INTO rerank_stats (model, tally) VALUES (?, ?)");
      const stored = (row: unknown) => (row as { tally: string } | null)?.tally;
      try {
        db.transaction(() => {
          for (const { key, update } of batch.tools) {
            const text = update(stored(readTool.get(key.server, key.tool)));
            writeTool.run(key.server, key.tool, text);
          }
          for (const { key, update } of batch.principals) {
            const text = update(stored(readOwn.get(key.principal, key.server, key.tool)));
            writeOwn.run(key.principal, key.server, key.tool, text);
          }
          for (const { key, update } of batch.reranks) {
            writeRerank.run(key.model, update(stored(readRerank.get(key.model))));
          }
        }).immediate();
      } catch (error) {
        // The transaction was rolled back; the connection may still be in it when it could not.
        try {
          if (db.inTransaction) db.exec("ROLLBACK");
        } catch {
          // the connection ends the transaction itself when it cannot
        }
        throw error;
      }
    },
    deleteTool(server, tool) {
      db.query("DELETE FROM tool_stats WHERE server = ? AND tool = ?").run(server, tool);
      db.query("DELETE FROM principal_stats WHERE server = ? AND tool = ?").run(server, tool);
    },
    deleteReranks() {
      db.exec("DELETE FROM rerank_stats");
    },
    close: () => db.close(),
  };
}
