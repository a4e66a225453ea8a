import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describeError } from "../../errors.ts";
import { createPrivateFile } from "../../index/atomic-file.ts";
import { type Logger, silentLogger } from "../../log.ts";
import { createCallRecorder, toolKey as key, MAX_PENDING_TOOLS } from "../../stats/call-recorder.ts";
import { addRerank, type RerankFigures, type RerankRecord, rerankFigures } from "../../stats/rerank-stats.ts";
import { add, figures, parseTally, type Tally } from "../../stats/tally.ts";
import { RERANK_TABLE, readRerankTallies, writeRerankTallies } from "./rerank-tables.ts";

/**
 * What every call through the proxy did, per tool, in `<data dir>/stats.db` (SQLite, WAL): calls,
 * successes, failures by kind (an `isError` result, a JSON-RPC error, a timeout), latency (mean and
 * a fine log-scale histogram for the p95, latency-histogram.ts), the last error and when, and how many calls followed a search
 * that showed the tool, the calls the server's limits refused (src/limits/: they never reached
 * the server, so they count apart from `calls` and the success rate), and what the chat model of
 * `llm` search mode cost (rerank-stats.ts). Calls are counted in memory and written in one transaction a second (and at
 * close): a call costs a few map updates, never a disk write. A write that fails (a full disk) is
 * logged once and its counts kept for the next. A proxy that does not hold the data
 * dir's writer lock keeps its counts in memory.
 */
export type CallOutcome = "ok" | "isError" | "error" | "timeout" | "limited";

export interface CallRecord {
  server: string;
  tool: string;
  ms: number;
  outcome: CallOutcome;
  error?: string | undefined;
  /** The tool was in the calling session's last retrieve_tools answer. */
  afterSearch: boolean;
  /** The client session that made the call: its own errors are told back to it (tools_stat). */
  session?: string | undefined;
  /** Who called (the HTTP listener's access token, src/auth/resource/): counted for them apart too. */
  principal?: string | undefined;
}

export interface ToolStats {
  server: string;
  tool: string;
  calls: number;
  successes: number;
  /** `isError` results. */
  isErrors: number;
  /** JSON-RPC errors and unreachable servers. */
  errors: number;
  timeouts: number;
  /** Refused by the server's call limits (rate, concurrency, a full queue): not in `calls`. */
  limited: number;
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
  afterSearch: number;
  lastError?: string | undefined;
  lastErrorAt?: string | undefined;
  lastCalledAt: string;
}

export interface CallStats {
  record(call: CallRecord): void;
  /** One search's use of the chat model in `llm` search mode (rerank-stats.ts). */
  recordRerank(record: RerankRecord): void;
  /** The chat model's figures per model, what is still in memory included. */
  reranks(): RerankFigures[];
  /** Every tool's figures, what is still in memory included. */
  all(): ToolStats[];
  /** These tools' figures (those with any), read row by row: a search's few hits, not every tool. */
  figuresOf(tools: readonly { server: string; tool: string }[]): ToolStats[];
  /**
   * The last error of each tool as one session's own calls met it (this process's, in memory).
   * Another session's errors may quote its data: an agent sees its own only.
   */
  errorsOf(session: string): Map<string, { error: string; at: string }>;
  /** Every tool's figures of one principal's own calls. */
  ofPrincipal(principal: string): ToolStats[];
  /** Forgets a server's figures, or one tool's; resolves to how many tools were reset. */
  reset(filter: { server?: string | undefined; tool?: string | undefined }): number;
  flush(): void;
  /**
   * Starts saving to the data dir (a serve that took the writer lock over from one that exited):
   * what it counted in memory meanwhile is saved with the next flush.
   */
  startSaving(): void;
  close(): void;
}

export const STATS_FILE = "stats.db";
const FLUSH_MS = 1_000;

export function openCallStats(
  dataDir: string,
  options: { persist: boolean; now?: () => number; logger?: Logger } = { persist: true },
): CallStats {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const path = join(dataDir, STATS_FILE);
  let db: Database | undefined;
  let saving = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  const startSaving = () => {
    if (saving) return;
    db?.close();
    // 0600 whatever the umask: it holds what tools were called and how they failed.
    createPrivateFile(path);
    db = new Database(path, { create: true });
    db.exec("PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000;");
    db.exec(`CREATE TABLE IF NOT EXISTS tool_stats (
      server TEXT NOT NULL, tool TEXT NOT NULL, tally TEXT NOT NULL, PRIMARY KEY (server, tool))`);
    db.exec(RERANK_TABLE);
    db.exec(PRINCIPAL_TABLE);
    saving = true;
    timer = setInterval(flush, FLUSH_MS);
    timer.unref?.();
  };
  if (!options.persist && existsSync(path)) db = new Database(path, { readonly: true });
  /** Set while writing fails: said once, and once more when it works again. */
  let failure: { dropped: number } | undefined;
  const recorder = createCallRecorder({
    now,
    isBounded: () => failure !== undefined,
    onDropped: () => {
      if (failure) failure.dropped++;
    },
  });

  const stored = (): Map<string, { server: string; tool: string; tally: Tally }> => {
    const rows = (db?.query("SELECT server, tool, tally FROM tool_stats").all() ?? []) as {
      server: string;
      tool: string;
      tally: string;
    }[];
    return new Map(rows.map((row) => [key(row.server, row.tool), { ...row, tally: parseTally(row.tally) }]));
  };

  const flush = () => {
    if (recorder.isEmpty() || !saving || !db) return;
    const { tools: pending, principals: principalPending, reranks: pendingReranks } = recorder.pending;
    const batch = [...pending.values()];
    try {
      const read = db.query("SELECT tally FROM tool_stats WHERE server = ? AND tool = ?");
      const write = db.query("INSERT OR REPLACE INTO tool_stats (server, tool, tally) VALUES (?, ?, ?)");
      db.transaction(() => {
        for (const { server, tool, tally } of batch) {
          const row = read.get(server, tool) as { tally: string } | null;
          const merged = row ? add(parseTally(row.tally), tally) : tally;
          write.run(server, tool, JSON.stringify(merged));
        }
        writeRerankTallies(db!, pendingReranks);
        writePrincipalTallies(db!, principalPending.values());
      })();
    } catch (error) {
      // A full disk or a locked file: the transaction was rolled back, so the counts stay pending
      // (bounded, see MAX_PENDING_TOOLS) and the next flush tries again. Said once, not each second.
      try {
        if (db.inTransaction) db.exec("ROLLBACK");
      } catch {
        // the connection ends the transaction itself when it cannot
      }
      if (!failure) {
        logger.warn(
          `could not save the call statistics to ${path} (${describeError(error)}); keeping them in memory and trying again`,
        );
        failure = { dropped: 0 };
      }
      return;
    }
    recorder.take();
    if (failure) {
      logger.info(
        `call statistics saved again${failure.dropped > 0 ? `; ${failure.dropped} calls to tools beyond the ${MAX_PENDING_TOOLS} kept in memory were not counted` : ""}`,
      );
      failure = undefined;
    }
  };
  if (options.persist) startSaving();

  return {
    record: recorder.record,
    recordRerank: recorder.recordRerank,
    errorsOf: recorder.errorsOf,
    reranks() {
      const merged = readRerankTallies(db);
      for (const [model, tally] of recorder.pending.reranks) {
        const base = merged.get(model);
        merged.set(model, base ? addRerank(base, tally) : structuredClone(tally));
      }
      return [...merged].map(([model, tally]) => rerankFigures(model, tally));
    },
    ofPrincipal(principal) {
      const merged = new Map<string, { server: string; tool: string; tally: Tally }>();
      const rows = (db
        ?.query("SELECT server, tool, tally FROM principal_stats WHERE principal = ?")
        .all(principal) ?? []) as { server: string; tool: string; tally: string }[];
      for (const row of rows) merged.set(key(row.server, row.tool), { ...row, tally: parseTally(row.tally) });
      for (const entry of recorder.pending.principals.values()) {
        if (entry.principal !== principal) continue;
        const base = merged.get(key(entry.server, entry.tool));
        merged.set(key(entry.server, entry.tool), {
          ...entry,
          tally: base ? add(base.tally, entry.tally) : entry.tally,
        });
      }
      return [...merged.values()].map(({ server, tool, tally }) => figures(server, tool, tally));
    },
    all() {
      const merged = stored();
      for (const [k, entry] of recorder.pending.tools) {
        const base = merged.get(k);
        merged.set(k, {
          ...entry,
          tally: base ? add(structuredClone(base.tally), entry.tally) : entry.tally,
        });
      }
      return [...merged.values()].map(({ server, tool, tally }) => figures(server, tool, tally));
    },
    figuresOf(tools) {
      const read = db?.query("SELECT tally FROM tool_stats WHERE server = ? AND tool = ?");
      return tools.flatMap(({ server, tool }) => {
        const row = read?.get(server, tool) as { tally: string } | null | undefined;
        const fresh = recorder.pending.tools.get(key(server, tool))?.tally;
        const stored = row ? parseTally(row.tally) : undefined;
        const tally = stored && fresh ? add(stored, fresh) : (stored ?? fresh);
        return tally ? [figures(server, tool, tally)] : [];
      });
    },
    reset(filter) {
      flush();
      const matches = (server: string, tool: string) =>
        (!filter.server || filter.server === server) && (!filter.tool || filter.tool === tool);
      let count = 0;
      const isEverything = !filter.server && !filter.tool;
      recorder.forget(matches, isEverything);
      // The chat model's figures belong to no server: cleared with everything.
      if (isEverything && db && saving) db.exec("DELETE FROM rerank_stats");
      if (db && saving) {
        const remove = db.query("DELETE FROM tool_stats WHERE server = ? AND tool = ?");
        const removeOwn = db.query("DELETE FROM principal_stats WHERE server = ? AND tool = ?");
        for (const entry of stored().values()) {
          if (!matches(entry.server, entry.tool)) continue;
          remove.run(entry.server, entry.tool);
          removeOwn.run(entry.server, entry.tool);
          count++;
        }
      }
      return count;
    },
    flush,
    startSaving,
    close() {
      clearInterval(timer);
      flush();
      db?.close();
    },
  };
}

/** Each principal's own counts (the HTTP listener's access tokens), per tool. */
const PRINCIPAL_TABLE = `CREATE TABLE IF NOT EXISTS principal_stats (
  principal TEXT NOT NULL, server TEXT NOT NULL, tool TEXT NOT NULL, tally TEXT NOT NULL,
  PRIMARY KEY (principal, server, tool))`;

function writePrincipalTallies(
  db: Database,
  entries: Iterable<{ principal: string; server: string; tool: string; tally: Tally }>,
): void {
  const read = db.query("SELECT tally FROM principal_stats WHERE principal = ? AND server = ? AND tool = ?");
  const write = db.query(
    "INSERT OR REPLACE INTO principal_stats (principal, server, tool, tally) VALUES (?, ?, ?, ?)",
  );
  for (const { principal, server, tool, tally } of entries) {
    const row = read.get(principal, server, tool) as { tally: string } | null;
    write.run(principal, server, tool, JSON.stringify(row ? add(parseTally(row.tally), tally) : tally));
  }
}
