import { describeError } from "../errors.ts";
import { type Logger, silentLogger } from "../log.ts";
import type { StatsFilter, StatsRow, StatsTables } from "../store/postgres/stats-tables.ts";
import type { CallStats } from "./call-record.ts";
import { createCallRecorder, MAX_PENDING_TOOLS, type PendingBatch, toolKey } from "./call-recorder.ts";
import { fromStored } from "./latency-histogram.ts";
import { addRerank, emptyRerankTally, type RerankTally, rerankFigures } from "./rerank-stats.ts";
import { add, emptyTally, figures, parseTally, type Tally } from "./tally.ts";

/**
 * The call statistics of a replica sharing a store (store/postgres/stats-tables.ts): a call is
 * counted in memory exactly as on one machine (call-recorder.ts); once a second this replica adds
 * what it counted to its own rows, and every few seconds (and at once on a reset or compaction
 * notice) it reads the rows the replicas changed. Readers (tools_stat, the fallback ranking, the
 * learned prior, `--routing all`, include_metrics) see every replica's tallies added together,
 * plus what this one has not written yet. A store that cannot be reached keeps the counts in
 * memory (bounded as for a full disk) and they are written when it answers: nothing counted is
 * lost but a replica's last second if it dies.
 */
export interface SharedCallStats extends CallStats {
  /** Resets every replica's figures matching `filter` (the store tells the others). */
  resetShared(filter: StatsFilter): Promise<number>;
  /** Writes what is pending now (the next flush, awaited). */
  flushNow(): Promise<void>;
  /** Reads the replicas' rows now. */
  refresh(full?: boolean): Promise<void>;
  close(): Promise<void>;
}

export interface SharedCallStatsOptions {
  logger?: Logger;
  now?: () => number;
  flushMs?: number;
  refreshMs?: number;
  /** How often the rows of replicas that are gone are folded together (one replica does it). */
  compactMs?: number;
  /** Subscribes to the store's stats notices (store.changes.on); unset, none (the CLI). */
  onChange?: (handler: (subject: Record<string, unknown>) => void) => void;
}

const rowKey = (row: Pick<StatsRow, "replica" | "server" | "tool" | "principal">) =>
  `${row.replica}\u0000${row.server}\u0000${row.tool}\u0000${row.principal}`;
/** A full read now and then: a row a delta read missed (a very late commit) is found again. */
const FULL_READ_EVERY = 30;

/** Adds two tallies as stored (JSON): what the store's rows are merged with. */
export const mergeStoredTallies = (stored: unknown, delta: unknown): unknown =>
  add(parseTally(JSON.stringify(stored)), parseTally(JSON.stringify(delta)));
const mergeStoredReranks = (stored: unknown, delta: unknown): unknown =>
  addRerank(parseRerank(stored), parseRerank(delta));
const parseRerank = (value: unknown): RerankTally => {
  const tally = structuredClone(value) as RerankTally;
  return { ...emptyRerankTally(), ...tally, latency: fromStored(tally.latency) };
};

export async function openSharedCallStats(
  tables: StatsTables,
  options: SharedCallStatsOptions = {},
): Promise<SharedCallStats> {
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  let failure: { since: number; dropped: number } | undefined;
  const recorder = createCallRecorder({
    now,
    isBounded: () => failure !== undefined,
    onDropped: () => {
      if (failure) failure.dropped++;
    },
  });
  /** The store's rows as last read or written: every replica's, every principal's. */
  const rows = new Map<string, { server: string; tool: string; principal: string; tally: Tally }>();
  const reranks = new Map<string, { model: string; tally: RerankTally }>();
  /** The flush being written: still counted by readers until its rows are in `rows`. */
  let writing: PendingBatch | undefined;
  let merged: Map<string, { server: string; tool: string; tally: Tally }> | undefined;
  let readAt: number | undefined;
  let reads = 0;

  const keep = (row: StatsRow) => {
    rows.set(rowKey(row), { ...row, tally: parseTally(JSON.stringify(row.tally)) });
    merged = undefined;
  };
  const keepRerank = (replica: string, model: string, tally: unknown) =>
    reranks.set(`${replica}\u0000${model}`, { model, tally: parseRerank(tally) });

  let refreshing: Promise<void> | undefined;
  const refresh = (full = false): Promise<void> => {
    if (refreshing) return refreshing.then(() => refresh(full));
    refreshing = (async () => {
      try {
        const isFull = full || readAt === undefined || reads++ % FULL_READ_EVERY === 0;
        const read = await tables.read(isFull ? undefined : readAt);
        if (isFull) {
          rows.clear();
          reranks.clear();
        }
        for (const row of read.rows) keep(row);
        for (const row of read.reranks) keepRerank(row.replica, row.model, row.tally);
        merged = undefined;
        readAt = read.at;
      } catch (error) {
        logger.debug(`reading the replicas' call statistics: ${describeError(error)}`);
      } finally {
        refreshing = undefined;
      }
    })();
    return refreshing;
  };

  let flushing: Promise<void> | undefined;
  const flushNow = (): Promise<void> => {
    if (flushing) return flushing.then(() => flushNow());
    if (recorder.isEmpty()) return Promise.resolve();
    const batch = recorder.take();
    writing = batch;
    flushing = (async () => {
      try {
        const deltas = [
          ...[...batch.tools.values()].map((t) => ({ ...t, principal: "" })),
          ...batch.principals.values(),
        ];
        const written = await tables.addOwn(
          deltas,
          [...batch.reranks].map(([model, tally]) => ({ model, tally })),
          { tools: mergeStoredTallies, reranks: mergeStoredReranks },
        );
        for (const row of written.rows) keep(row);
        for (const row of written.reranks) keepRerank(row.replica, row.model, row.tally);
        if (failure) {
          logger.info(
            `call statistics written to the shared store again after ${Math.round((now() - failure.since) / 1000)} s` +
              (failure.dropped > 0
                ? `; ${failure.dropped} calls to tools beyond the ${MAX_PENDING_TOOLS} kept in memory were not counted`
                : ""),
          );
          failure = undefined;
        }
      } catch (error) {
        // The store is away (restarting, unreachable): keep the counts for the next flush.
        recorder.putBack(batch);
        if (!failure) {
          failure = { since: now(), dropped: 0 };
          logger.warn(
            `could not write the call statistics to the shared store (${describeError(error)}); ` +
              "keeping them in memory and trying again every second",
          );
        }
      } finally {
        writing = undefined;
        merged = undefined;
        flushing = undefined;
      }
    })();
    return flushing;
  };

  /** Every replica's tallies per tool (all callers), added together; rebuilt after a change. */
  const mergedTools = () => {
    if (merged) return merged;
    merged = new Map();
    for (const row of rows.values()) {
      if (row.principal !== "") continue;
      const k = toolKey(row.server, row.tool);
      const base = merged.get(k);
      merged.set(k, {
        server: row.server,
        tool: row.tool,
        tally: add(base?.tally ?? emptyTally(), row.tally),
      });
    }
    return merged;
  };
  /** `base` with what this replica has counted and not yet written (the flush in flight too). */
  const withUnwritten = <T extends { tally: Tally }>(
    base: T | undefined,
    pick: (batch: PendingBatch) => { tally: Tally } | undefined,
  ): Tally | undefined => {
    const parts = [base?.tally, writing && pick(writing)?.tally, pick(recorder.pending)?.tally].filter(
      (t): t is Tally => t !== undefined,
    );
    if (parts.length === 0) return undefined;
    return parts.reduce((sum, t) => add(sum, t), emptyTally());
  };

  await refresh(true);
  options.onChange?.((subject) => {
    if (subject.op === "reset") {
      const filter = subject as StatsFilter;
      const isEverything = !filter.server && !filter.tool;
      recorder.forget(
        (server, tool) =>
          (!filter.server || filter.server === server) && (!filter.tool || filter.tool === tool),
        isEverything,
      );
    }
    void refresh(true);
  });
  const flushTimer = setInterval(() => void flushNow(), options.flushMs ?? 1_000);
  const refreshTimer = setInterval(() => void refresh(), options.refreshMs ?? 3_000);
  const compactTimer = setInterval(
    () => void tables.compact(mergeStoredTallies).catch(() => {}),
    options.compactMs ?? 60_000,
  );
  for (const timer of [flushTimer, refreshTimer, compactTimer]) timer.unref?.();

  const figuresOf = (list: readonly { server: string; tool: string }[]) => {
    const base = mergedTools();
    return list.flatMap(({ server, tool }) => {
      const k = toolKey(server, tool);
      const sum = withUnwritten(base.get(k), (batch) => batch.tools.get(k));
      return sum ? [figures(server, tool, sum)] : [];
    });
  };

  return {
    record: recorder.record,
    recordRerank: recorder.recordRerank,
    errorsOf: recorder.errorsOf,
    reranks() {
      const byModel = new Map<string, RerankTally>();
      const addIn = (model: string, tally: RerankTally) =>
        byModel.set(model, addRerank(byModel.get(model) ?? emptyRerankTally(), tally));
      for (const { model, tally } of reranks.values()) addIn(model, tally);
      for (const batch of [writing, recorder.pending])
        for (const [model, tally] of batch?.reranks ?? []) addIn(model, tally);
      return [...byModel].map(([model, tally]) => rerankFigures(model, tally));
    },
    ofPrincipal(principal) {
      const sums = new Map<string, { server: string; tool: string; tally: Tally }>();
      const addIn = (entry: { server: string; tool: string; tally: Tally }) => {
        const k = toolKey(entry.server, entry.tool);
        sums.set(k, { ...entry, tally: add(sums.get(k)?.tally ?? emptyTally(), entry.tally) });
      };
      for (const row of rows.values()) if (row.principal === principal) addIn(row);
      for (const batch of [writing, recorder.pending])
        for (const entry of batch?.principals.values() ?? []) if (entry.principal === principal) addIn(entry);
      return [...sums.values()].map(({ server, tool, tally }) => figures(server, tool, tally));
    },
    all() {
      const tools = new Map<string, { server: string; tool: string }>(mergedTools());
      for (const batch of [writing, recorder.pending])
        for (const [k, entry] of batch?.tools ?? []) tools.set(k, entry);
      return figuresOf([...tools.values()]);
    },
    figuresOf,
    reset() {
      throw new Error("a shared store's figures are reset with resetShared");
    },
    async resetShared(filter) {
      await flushNow();
      const count = await tables.reset(filter);
      await refresh(true);
      return count;
    },
    flush: () => void flushNow(),
    flushNow,
    refresh,
    startSaving() {},
    async close() {
      for (const timer of [flushTimer, refreshTimer, compactTimer]) clearInterval(timer);
      await flushNow();
    },
  };
}
