import { Database } from "bun:sqlite";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describeError } from "../errors.ts";
import { createPrivateFile } from "../index/atomic-file.ts";
import { type Logger, silentLogger } from "../log.ts";
import { redactSecrets } from "../security/redact-secrets.ts";
import {
  emptyHistogram,
  fromStored,
  type LatencyHistogram,
  merge,
  observe,
  percentile,
} from "./latency-histogram.ts";
import {
  addRerank,
  emptyRerankTally,
  RERANK_TABLE,
  type RerankFigures,
  type RerankRecord,
  type RerankTally,
  readRerankTallies,
  recordRerank,
  rerankFigures,
  writeRerankTallies,
} from "./rerank-stats.ts";

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
/** How many sessions' own last errors are kept (the oldest go first). */
const MAX_SESSIONS_KEPT = 1_000;
const FLUSH_MS = 1_000;
/**
 * How many tools' unsaved counts are kept while writing fails (a full disk): each is a small tally
 * however many calls it counts, so this bounds memory; calls to tools beyond it are not counted.
 */
const MAX_PENDING_TOOLS = 10_000;

interface Tally {
  calls: number;
  successes: number;
  isErrors: number;
  errors: number;
  timeouts: number;
  limited: number;
  totalMs: number;
  afterSearch: number;
  latency: LatencyHistogram;
  lastError?: string | undefined;
  lastErrorAt?: number | undefined;
  lastCalledAt: number;
}

const emptyTally = (): Tally => ({
  calls: 0,
  successes: 0,
  isErrors: 0,
  errors: 0,
  timeouts: 0,
  limited: 0,
  totalMs: 0,
  afterSearch: 0,
  latency: emptyHistogram(),
  lastCalledAt: 0,
});

/** A tally as stored; the first format kept its latencies in `histogram` (latency-histogram.ts). */
function parseTally(text: string): Tally {
  const { histogram, latency, ...rest } = JSON.parse(text) as Tally & { histogram?: unknown };
  // Tallies saved before the call limits have no `limited`.
  return { ...rest, limited: rest.limited ?? 0, latency: fromStored(latency ?? histogram) };
}

function add(into: Tally, from: Tally): Tally {
  for (const key of [
    "calls",
    "successes",
    "isErrors",
    "errors",
    "timeouts",
    "limited",
    "totalMs",
    "afterSearch",
  ] as const)
    into[key] += from[key];
  merge(into.latency, from.latency);
  if ((from.lastErrorAt ?? 0) > (into.lastErrorAt ?? 0)) {
    into.lastError = from.lastError;
    into.lastErrorAt = from.lastErrorAt;
  }
  into.lastCalledAt = Math.max(into.lastCalledAt, from.lastCalledAt);
  return into;
}

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
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    // 0600 whatever the umask: it holds what tools were called and how they failed.
    createPrivateFile(path);
    db = new Database(path, { create: true });
    db.exec("PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000;");
    db.exec(`CREATE TABLE IF NOT EXISTS tool_stats (
      server TEXT NOT NULL, tool TEXT NOT NULL, tally TEXT NOT NULL, PRIMARY KEY (server, tool))`);
    db.exec(RERANK_TABLE);
    saving = true;
    timer = setInterval(flush, FLUSH_MS);
    timer.unref?.();
  };
  if (!options.persist && existsSync(path)) db = new Database(path, { readonly: true });
  const pending = new Map<string, { server: string; tool: string; tally: Tally }>();
  const pendingReranks = new Map<string, RerankTally>();
  const key = (server: string, tool: string) => `${server}\u0000${tool}`;
  /** Each session's last error per tool, for the sessions that met one lately (bounded). */
  const sessionErrors = new Map<string, Map<string, { error: string; at: string }>>();

  const stored = (): Map<string, { server: string; tool: string; tally: Tally }> => {
    const rows = (db?.query("SELECT server, tool, tally FROM tool_stats").all() ?? []) as {
      server: string;
      tool: string;
      tally: string;
    }[];
    return new Map(rows.map((row) => [key(row.server, row.tool), { ...row, tally: parseTally(row.tally) }]));
  };

  /** Set while writing fails: said once, and once more when it works again. */
  let failure: { dropped: number } | undefined;
  const flush = () => {
    if ((pending.size === 0 && pendingReranks.size === 0) || !saving || !db) return;
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
    pending.clear();
    pendingReranks.clear();
    if (failure) {
      logger.info(
        `call statistics saved again${failure.dropped > 0 ? `; ${failure.dropped} calls to tools beyond the ${MAX_PENDING_TOOLS} kept in memory were not counted` : ""}`,
      );
      failure = undefined;
    }
  };
  if (options.persist) startSaving();

  return {
    record(call) {
      const k = key(call.server, call.tool);
      let entry = pending.get(k);
      if (!entry) {
        if (failure && pending.size >= MAX_PENDING_TOOLS) {
          failure.dropped++;
          return;
        }
        entry = { server: call.server, tool: call.tool, tally: emptyTally() };
        pending.set(k, entry);
      }
      const t = entry.tally;
      if (call.outcome === "limited") {
        t.limited++;
        return;
      }
      t.calls++;
      t.totalMs += call.ms;
      observe(t.latency, call.ms);
      t.lastCalledAt = now();
      if (call.afterSearch) t.afterSearch++;
      if (call.outcome === "ok") t.successes++;
      else {
        if (call.outcome === "isError") t.isErrors++;
        else if (call.outcome === "timeout") t.timeouts++;
        else t.errors++;
        // An upstream's error text may echo a token it was given; it is shown to people and agents.
        t.lastError = call.error === undefined ? undefined : redactSecrets(call.error.slice(0, 500));
        t.lastErrorAt = now();
        if (call.session && t.lastError) {
          let own = sessionErrors.get(call.session);
          if (!own) {
            if (sessionErrors.size >= MAX_SESSIONS_KEPT)
              sessionErrors.delete(sessionErrors.keys().next().value!);
            own = new Map();
            sessionErrors.set(call.session, own);
          }
          own.set(k, { error: t.lastError, at: new Date(t.lastErrorAt).toISOString() });
        }
      }
    },
    recordRerank(record) {
      let tally = pendingReranks.get(record.model);
      if (!tally) {
        // Bounded like the tools' tallies: one per model, and models change rarely.
        if (failure && pendingReranks.size >= MAX_PENDING_TOOLS) return;
        tally = emptyRerankTally();
        pendingReranks.set(record.model, tally);
      }
      recordRerank(tally, record, now());
    },
    reranks() {
      const merged = readRerankTallies(db);
      for (const [model, tally] of pendingReranks) {
        const base = merged.get(model);
        merged.set(model, base ? addRerank(base, tally) : structuredClone(tally));
      }
      return [...merged].map(([model, tally]) => rerankFigures(model, tally));
    },
    errorsOf(session) {
      const own = sessionErrors.get(session) ?? new Map();
      return new Map([...own].map(([k, value]) => [k.replace("\u0000", "/"), value]));
    },
    all() {
      const merged = stored();
      for (const [k, entry] of pending) {
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
        const fresh = pending.get(key(server, tool))?.tally;
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
      for (const [k, entry] of pending) if (matches(entry.server, entry.tool)) pending.delete(k);
      // The chat model's figures belong to no server: cleared with everything.
      if (!filter.server && !filter.tool) {
        pendingReranks.clear();
        if (db && saving) db.exec("DELETE FROM rerank_stats");
      }
      if (db && saving) {
        const remove = db.query("DELETE FROM tool_stats WHERE server = ? AND tool = ?");
        for (const entry of stored().values()) {
          if (!matches(entry.server, entry.tool)) continue;
          remove.run(entry.server, entry.tool);
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

function figures(server: string, tool: string, t: Tally): ToolStats {
  const p95 = percentile(t.latency, 0.95);
  return {
    server,
    tool,
    calls: t.calls,
    successes: t.successes,
    isErrors: t.isErrors,
    errors: t.errors,
    timeouts: t.timeouts,
    limited: t.limited,
    meanMs: t.calls ? Math.round((t.totalMs / t.calls) * 100) / 100 : 0,
    p50Ms: Math.round(percentile(t.latency, 0.5) * 100) / 100,
    p95Ms: Math.round(p95 * 100) / 100,
    afterSearch: t.afterSearch,
    ...(t.lastError ? { lastError: t.lastError } : {}),
    ...(t.lastErrorAt ? { lastErrorAt: new Date(t.lastErrorAt).toISOString() } : {}),
    lastCalledAt: new Date(t.lastCalledAt).toISOString(),
  };
}
