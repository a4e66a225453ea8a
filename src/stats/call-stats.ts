import { describeError } from "../errors.ts";
import { type Logger, silentLogger } from "../log.ts";
import { openStatsDb, readStatsDb, type StatsDb, type StoredTally } from "../store/sqlite/stats-db.ts";
import type { CallStats } from "./call-record.ts";
import { createCallRecorder, toolKey as key, MAX_PENDING_TOOLS } from "./call-recorder.ts";
import { addRerank, parseRerankTally, rerankFigures } from "./rerank-stats.ts";
import { add, figures, parseTally, type Tally } from "./tally.ts";

/**
 * The call statistics of one machine, kept in the data dir's stats.db (store/sqlite/stats-db.ts).
 * Calls are counted in memory and written in one transaction a second (and at close): a call costs
 * a few map updates, never a disk write. A write that fails (a full disk) is logged once and its
 * counts kept for the next. A proxy that does not hold the data dir's writer lock keeps its counts
 * in memory (`persist: false`) and reads what the holder saved.
 */
const FLUSH_MS = 1_000;

export function openCallStats(
  dataDir: string,
  options: { persist: boolean; now?: () => number; logger?: Logger } = { persist: true },
): CallStats {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  let db: StatsDb | undefined = options.persist ? undefined : readStatsDb(dataDir);
  let saving = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  const startSaving = () => {
    if (saving) return;
    db?.close();
    db = openStatsDb(dataDir);
    saving = true;
    timer = setInterval(flush, FLUSH_MS);
    timer.unref?.();
  };
  /** Set while writing fails: said once, and once more when it works again. */
  let failure: { dropped: number } | undefined;
  const recorder = createCallRecorder({
    now,
    isBounded: () => failure !== undefined,
    onDropped: () => {
      if (failure) failure.dropped++;
    },
  });

  const parsed = (rows: readonly StoredTally[]) =>
    new Map(rows.map((row) => [key(row.server, row.tool), { ...row, tally: parseTally(row.tally) }]));
  /** A pending tally added to the stored one (if any), as the text to store. */
  const merged = (tally: Tally) => (stored: string | undefined) =>
    JSON.stringify(stored === undefined ? tally : add(parseTally(stored), tally));

  const flush = () => {
    if (recorder.isEmpty() || !saving || !db) return;
    const { tools, principals, reranks } = recorder.pending;
    try {
      db.write({
        tools: [...tools.values()].map(({ server, tool, tally }) => ({
          key: { server, tool },
          update: merged(tally),
        })),
        principals: [...principals.values()].map(({ principal, server, tool, tally }) => ({
          key: { principal, server, tool },
          update: merged(tally),
        })),
        reranks: [...reranks].map(([model, tally]) => ({
          key: { model },
          update: (stored: string | undefined) =>
            JSON.stringify(stored === undefined ? tally : addRerank(parseRerankTally(stored), tally)),
        })),
      });
    } catch (error) {
      // A full disk or a locked file: nothing was written, so the counts stay pending (bounded, see
      // MAX_PENDING_TOOLS) and the next flush tries again. Said once, not each second.
      if (!failure) {
        logger.warn(
          `could not save the call statistics to ${db.path} (${describeError(error)}); keeping them in memory and trying again`,
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
      const all = new Map((db?.reranks() ?? []).map((row) => [row.model, parseRerankTally(row.tally)]));
      for (const [model, tally] of recorder.pending.reranks) {
        const base = all.get(model);
        all.set(model, base ? addRerank(base, tally) : structuredClone(tally));
      }
      return [...all].map(([model, tally]) => rerankFigures(model, tally));
    },
    ofPrincipal(principal) {
      const all = parsed(db?.ofPrincipal(principal) ?? []);
      for (const entry of recorder.pending.principals.values()) {
        if (entry.principal !== principal) continue;
        const base = all.get(key(entry.server, entry.tool));
        all.set(key(entry.server, entry.tool), {
          ...entry,
          tally: base ? add(base.tally, entry.tally) : entry.tally,
        });
      }
      return [...all.values()].map(({ server, tool, tally }) => figures(server, tool, tally));
    },
    all() {
      const all = parsed(db?.tools() ?? []);
      for (const [k, entry] of recorder.pending.tools) {
        const base = all.get(k);
        all.set(k, { ...entry, tally: base ? add(structuredClone(base.tally), entry.tally) : entry.tally });
      }
      return [...all.values()].map(({ server, tool, tally }) => figures(server, tool, tally));
    },
    figuresOf(tools) {
      return tools.flatMap(({ server, tool }) => {
        const row = db?.tool(server, tool);
        const fresh = recorder.pending.tools.get(key(server, tool))?.tally;
        const stored = row === undefined ? undefined : parseTally(row);
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
      if (db && saving) {
        // The chat model's figures belong to no server: cleared with everything.
        if (isEverything) db.deleteReranks();
        for (const row of db.tools()) {
          if (!matches(row.server, row.tool)) continue;
          db.deleteTool(row.server, row.tool);
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
