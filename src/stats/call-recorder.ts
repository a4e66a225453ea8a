import type { CallRecord } from "./call-record.ts";
import {
  addRerank,
  emptyRerankTally,
  type RerankRecord,
  type RerankTally,
  recordRerank,
} from "./rerank-stats.ts";
import { add, countCall, emptyTally, type Tally } from "./tally.ts";

/**
 * The hot path of the call statistics: what a call adds, in memory, until a flush writes it (to
 * stats.db, call-stats.ts, or to the shared store, shared-call-stats.ts). A call costs a few map
 * updates. While writing fails (`isBounded`), no new tool is added past MAX_PENDING_TOOLS.
 */
interface PendingTally {
  server: string;
  tool: string;
  tally: Tally;
}

interface PrincipalTally extends PendingTally {
  principal: string;
}

/** What a flush writes: taken from the recorder whole, so calls counted meanwhile go to the next. */
export interface PendingBatch {
  tools: Map<string, PendingTally>;
  principals: Map<string, PrincipalTally>;
  reranks: Map<string, RerankTally>;
}

export interface CallRecorder {
  readonly pending: PendingBatch;
  record(call: CallRecord): void;
  recordRerank(record: RerankRecord): void;
  errorsOf(session: string): Map<string, { error: string; at: string }>;
  isEmpty(): boolean;
  /** Hands what is pending to a flush and starts afresh. */
  take(): PendingBatch;
  /** Adds back a batch a flush could not write (it is counted with the next). */
  putBack(batch: PendingBatch): void;
  /** Forgets what is pending of the tools `matches` names (a reset). */
  forget(matches: (server: string, tool: string) => boolean, reranksToo: boolean): void;
}

/** How many sessions' own last errors are kept (the oldest go first). */
const MAX_SESSIONS_KEPT = 1_000;
/**
 * How many tools' unsaved counts are kept while writing fails (a full disk, a store away): each is a
 * small tally however many calls it counts, so this bounds memory; calls to tools beyond it are not counted.
 */
export const MAX_PENDING_TOOLS = 10_000;

export const toolKey = (server: string, tool: string) => `${server}\u0000${tool}`;

const emptyBatch = (): PendingBatch => ({ tools: new Map(), principals: new Map(), reranks: new Map() });

export function createCallRecorder(options: {
  now: () => number;
  /** Writing fails now: bound what is kept. */
  isBounded: () => boolean;
  /** A call was not counted because of the bound. */
  onDropped: () => void;
}): CallRecorder {
  const { now, isBounded } = options;
  let batch = emptyBatch();
  /** Each session's last error per tool, for the sessions that met one lately (bounded). */
  const sessionErrors = new Map<string, Map<string, { error: string; at: string }>>();

  const countForPrincipal = (principal: string, k: string, call: CallRecord) => {
    const pk = `${principal}\u0000${k}`;
    let entry = batch.principals.get(pk);
    if (!entry) {
      if (isBounded() && batch.principals.size >= MAX_PENDING_TOOLS) return;
      entry = { principal, server: call.server, tool: call.tool, tally: emptyTally() };
      batch.principals.set(pk, entry);
    }
    countCall(entry.tally, call, now());
  };

  return {
    get pending() {
      return batch;
    },
    record(call) {
      const k = toolKey(call.server, call.tool);
      let entry = batch.tools.get(k);
      if (!entry) {
        if (isBounded() && batch.tools.size >= MAX_PENDING_TOOLS) {
          options.onDropped();
          return;
        }
        entry = { server: call.server, tool: call.tool, tally: emptyTally() };
        batch.tools.set(k, entry);
      }
      const t = entry.tally;
      countCall(t, call, now());
      if (call.principal) countForPrincipal(call.principal, k, call);
      if (call.outcome === "limited" || call.outcome === "ok") return;
      if (call.session && t.lastError) {
        let own = sessionErrors.get(call.session);
        if (!own) {
          if (sessionErrors.size >= MAX_SESSIONS_KEPT)
            sessionErrors.delete(sessionErrors.keys().next().value!);
          own = new Map();
          sessionErrors.set(call.session, own);
        }
        own.set(k, { error: t.lastError, at: new Date(t.lastErrorAt!).toISOString() });
      }
    },
    recordRerank(record) {
      let tally = batch.reranks.get(record.model);
      if (!tally) {
        // Bounded like the tools' tallies: one per model, and models change rarely.
        if (isBounded() && batch.reranks.size >= MAX_PENDING_TOOLS) return;
        tally = emptyRerankTally();
        batch.reranks.set(record.model, tally);
      }
      recordRerank(tally, record, now());
    },
    errorsOf(session) {
      const own = sessionErrors.get(session) ?? new Map();
      return new Map([...own].map(([k, value]) => [k.replace("\u0000", "/"), value]));
    },
    isEmpty: () => batch.tools.size === 0 && batch.principals.size === 0 && batch.reranks.size === 0,
    take() {
      const taken = batch;
      batch = emptyBatch();
      return taken;
    },
    putBack(old) {
      const addInto = <T extends { tally: Tally }>(into: Map<string, T>, from: Map<string, T>) => {
        for (const [k, entry] of from) {
          const now = into.get(k);
          // The older counts go first: the newer call's last error stays the last.
          into.set(k, now ? { ...entry, tally: add(entry.tally, now.tally) } : entry);
        }
      };
      addInto(old.tools, batch.tools);
      addInto(old.principals, batch.principals);
      for (const [model, tally] of batch.reranks) {
        const before = old.reranks.get(model);
        old.reranks.set(model, before ? addRerank(before, tally) : tally);
      }
      batch = old;
    },
    forget(matches, reranksToo) {
      for (const [k, entry] of batch.tools) if (matches(entry.server, entry.tool)) batch.tools.delete(k);
      for (const [k, entry] of batch.principals)
        if (matches(entry.server, entry.tool)) batch.principals.delete(k);
      if (reranksToo) batch.reranks.clear();
    },
  };
}
