import { randomUUID } from "node:crypto";
import { describeError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { readLeaseHolder } from "./postgres/store-status.ts";
import type { SharedStore } from "./shared-store.ts";

/**
 * `mcpproxy index --store`: a team's catalog is indexed by the replica holding the lease, so the
 * command asks it through the change log, as `index` beside a serve asks through the data dir
 * (src/app/index-requests.ts). The command records `index-request` {id}; every replica hears it,
 * and the one for which the lease is held records `index-taken` {id, replica} at once, re-indexes
 * every server, pushes what it wrote, and records `index-done` {id, text, code} with the summary
 * that `index` prints. A replica catching up on the log after a reconnect may answer a request its
 * asker gave up on: one pass more, nothing lost.
 */
const INDEX_REQUEST = "index-request";
const INDEX_TAKEN = "index-taken";
const INDEX_DONE = "index-done";

/** What `index` prints and its exit code (src/app/index-summary.ts). */
interface IndexSummaryText {
  text: string;
  code: number;
}

export type IndexAnswer =
  | { kind: "done"; replica: string; summary: IndexSummaryText }
  /** No replica holds the lease: none is running (or none has its data dir to itself). */
  | { kind: "no-holder" }
  /** The holder did not take the request in time. */
  | { kind: "unanswered"; replica: string }
  /** The replica that took it stopped holding the lease before it answered (it died, or lost it). */
  | { kind: "holder-gone"; replica: string };

/**
 * How long the holder has to take a request: it hears of it at once (NOTIFY) or on its next poll
 * of the log (store-changes.ts, 5 s), and takes it before it starts re-indexing.
 */
export const TAKE_WAIT_MS = 20_000;
/** How often the asker checks that the replica re-indexing still holds the lease. */
const HOLDER_CHECK_MS = 2_000;
/** Checks in a row without the lease before it is given up (its holder takes it back after a PostgreSQL restart). */
const HOLDER_MISSES = 3;
const WAIT_MS = 100;

export async function askLeaseHolderToIndex(
  store: SharedStore,
  options: { takeWaitMs?: number } = {},
): Promise<IndexAnswer> {
  const holder = await readLeaseHolder(store.sql);
  if (!holder) return { kind: "no-holder" };
  const id = randomUUID();
  let taken: string | undefined;
  let done: IndexAnswer | undefined;
  const mine = (subject: Record<string, unknown>) => subject.id === id;
  const stops = [
    store.changes.on(INDEX_TAKEN, (change) => {
      if (mine(change.subject)) taken ??= String(change.subject.replica ?? change.origin);
    }),
    store.changes.on(INDEX_DONE, (change) => {
      const { text, code } = change.subject;
      if (!mine(change.subject) || typeof text !== "string" || typeof code !== "number") return;
      done ??= {
        kind: "done",
        replica: String(change.subject.replica ?? change.origin),
        summary: { text, code },
      };
    }),
  ];
  try {
    await store.announce(INDEX_REQUEST, { id });
    const asked = Date.now();
    let lastCheck = asked;
    let misses = 0;
    for (;;) {
      if (done) return done;
      const now = Date.now();
      if (!taken && now - asked > (options.takeWaitMs ?? TAKE_WAIT_MS))
        return { kind: "unanswered", replica: holder };
      if (now - lastCheck >= HOLDER_CHECK_MS) {
        lastCheck = now;
        // Notifications come at once; this covers one lost with a connection.
        await store.changes.catchUp();
        if (taken && !done) {
          misses = (await readLeaseHolder(store.sql)) === taken ? 0 : misses + 1;
          if (misses >= HOLDER_MISSES) return { kind: "holder-gone", replica: taken };
        }
        continue;
      }
      await Bun.sleep(WAIT_MS);
    }
  } finally {
    for (const stop of stops) stop();
  }
}

export interface IndexRequestAnswering {
  /** The lease is held here now (asked for each request: it may move). */
  isHolder: () => boolean;
  /** Re-indexes every server and resolves once the store holds what it wrote. */
  reindex: () => Promise<IndexSummaryText>;
  logger: Logger;
}

/**
 * The replica's side: requests heard while it holds the lease are taken at once and answered by one
 * re-indexing pass (requests arriving meanwhile get the next pass). Returns a function that stops.
 */
export function answerIndexRequests(store: SharedStore, options: IndexRequestAnswering): () => void {
  const { logger } = options;
  const waiting: string[] = [];
  let isRunning = false;
  const say = (kind: string, subject: Record<string, unknown>) =>
    store.announce(kind, { ...subject, replica: store.replicaId }).catch((error) => {
      logger.warn(`could not answer \`mcpproxy index --store\` (${kind}): ${describeError(error)}`);
    });
  const run = async () => {
    isRunning = true;
    while (waiting.length > 0) {
      const ids = waiting.splice(0);
      logger.info(`re-indexing every server: \`mcpproxy index --store\` asked (${ids.length} request(s))`);
      let summary: IndexSummaryText;
      try {
        const { text, code } = await options.reindex();
        summary = { text, code };
      } catch (error) {
        summary = { text: `Re-indexing failed: ${describeError(error)}\n`, code: 1 };
      }
      for (const id of ids) await say(INDEX_DONE, { id, ...summary });
    }
    isRunning = false;
  };
  return store.changes.on(INDEX_REQUEST, async (change) => {
    const { id } = change.subject;
    if (typeof id !== "string" || !options.isHolder()) return;
    await say(INDEX_TAKEN, { id });
    waiting.push(id);
    if (!isRunning) void run();
  });
}
