import type { Database } from "bun:sqlite";
import { addRerank, parseRerankTally, type RerankTally } from "../../stats/rerank-stats.ts";

/** The table in stats.db: one tally per model, as JSON. */
export const RERANK_TABLE = `CREATE TABLE IF NOT EXISTS rerank_stats (
  model TEXT PRIMARY KEY, tally TEXT NOT NULL)`;

export function readRerankTallies(db: Database | undefined): Map<string, RerankTally> {
  const hasTable = db
    ?.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rerank_stats'")
    .get();
  if (!db || !hasTable) return new Map();
  const rows = db.query("SELECT model, tally FROM rerank_stats").all() as { model: string; tally: string }[];
  return new Map(rows.map((row) => [row.model, parseRerankTally(row.tally)]));
}

/** Adds the pending tallies to the stored ones; inside the caller's transaction. */
export function writeRerankTallies(db: Database, pending: ReadonlyMap<string, RerankTally>): void {
  const read = db.query("SELECT tally FROM rerank_stats WHERE model = ?");
  const write = db.query("INSERT OR REPLACE INTO rerank_stats (model, tally) VALUES (?, ?)");
  for (const [model, tally] of pending) {
    const row = read.get(model) as { tally: string } | null;
    write.run(model, JSON.stringify(row ? addRerank(parseRerankTally(row.tally), tally) : tally));
  }
}
