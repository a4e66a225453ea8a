import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { describeError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import type { KeptBounds, KeptResultsTable } from "../../store/postgres/kept-results.ts";
import { askedRange, blobPage, textPage } from "./result-pages.ts";
import { RESULTS_PREFIX, ResultNotFound, type SharedResults } from "./result-spill.ts";
import type { StoredResult } from "./result-store.ts";

/**
 * Kept results of a team deployment: a 2026-07-28 client has no session, and the load balancer
 * may send its next request (resources/read of the URI, or read_result) to any replica, so what a
 * call keeps for a principal is written to the shared store as well as to this replica's memory
 * (result-store.ts), and a replica that does not hold an id reads its pages from the store, a
 * slice at a time (store/postgres/kept-results.ts). 2025 sessions live on one replica: their
 * results stay in its memory.
 *
 * The write is awaited before the call is answered, so another replica can read the result at
 * once (what the client expects), but for WRITE_WAIT_MS at most: past that, or with PostgreSQL
 * away, the result is this replica's alone (it still serves it from memory), and a log line says so.
 */
const WRITE_WAIT_MS = 3_000;
/** After a failed write, the next results go to memory alone for this long without waiting. */
const RETRY_WRITES_AFTER_MS = 5_000;
/** A page read that waits longer than this is answered with a retryable error. */
const READ_WAIT_MS = 5_000;

/** Scopes a shared store keeps: a principal's (2026-07-28), not a 2025 session's. */
export const isSharedScope = (scope: string) => scope.startsWith("principal:");

/** The store could not be read: the client may try again (another replica, or in a moment). */
class SharedResultsUnavailable extends ProtocolError {
  constructor(uri: string) {
    super(
      ProtocolErrorCode.InternalError,
      `The shared store cannot be reached to read ${uri} now: try again in a few seconds.`,
      { uri, retryable: true },
    );
  }
}

function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** The settings of kept results (the config's), as the shared store's bounds. */
export function sharedBoundsOf(config: {
  resultPageChars: number;
  resultTtlMs: number;
  resultsPerSession: number;
  resultSessionBytes: number;
  resultStoreBytes: number;
}): KeptBounds & { pageChars: number } {
  return {
    ttlMs: config.resultTtlMs,
    perOwner: config.resultsPerSession,
    ownerBytes: config.resultSessionBytes,
    totalBytes: config.resultStoreBytes,
    pageChars: config.resultPageChars,
  };
}

export function createSharedResults(
  table: KeptResultsTable,
  bounds: KeptBounds & { pageChars: number },
  logger: Logger,
): SharedResults {
  let failedAt = Number.NEGATIVE_INFINITY;
  const write = async (entry: StoredResult) => {
    const what = `a kept ${entry.kind} result (${entry.bytes} bytes)`;
    if (Date.now() - failedAt < RETRY_WRITES_AFTER_MS) {
      logger.warn(`${what} is kept in this replica's memory only: the shared store failed a moment ago`);
      return;
    }
    const data =
      entry.kind === "text" ? Buffer.from(entry.data, "utf16le") : Buffer.from(entry.data, "base64");
    const row = {
      id: entry.id,
      owner: entry.scope,
      kind: entry.kind,
      mimeType: entry.mimeType,
      bytes: entry.bytes,
    };
    try {
      await within(table.put({ ...row, data }, bounds), WRITE_WAIT_MS);
    } catch (error) {
      failedAt = Date.now();
      // Never the id or the content: the id is the part of the URI nobody may guess.
      logger.warn(
        `${what} is kept in this replica's memory only (the other replicas answer "not found"): ` +
          `the shared store did not take it: ${describeError(error)}`,
      );
    }
  };
  return {
    async keep(entries) {
      await Promise.all(entries.filter((entry) => isSharedScope(entry.scope)).map(write));
    },
    async read(uri, scope, range = {}) {
      const asked = askedRange(uri, RESULTS_PREFIX, range, bounds.pageChars);
      if (!isSharedScope(scope)) throw new ResultNotFound(uri);
      // A text's window holds one code unit either side of the page (a pair is never split), two bytes each.
      const text = { from: 2 * Math.max(0, asked.offset - 1), to: 2 * (asked.offset + asked.length + 1) };
      const blob = { from: asked.offset, to: asked.offset + asked.length };
      let slice: Awaited<ReturnType<KeptResultsTable["slice"]>>;
      try {
        slice = await within(table.slice(asked.id, scope, { text, blob }), READ_WAIT_MS);
      } catch (error) {
        logger.warn(`could not read a kept result from the shared store: ${describeError(error)}`);
        throw new SharedResultsUnavailable(uri);
      }
      if (!slice) throw new ResultNotFound(uri);
      const entry = { id: asked.id, kind: slice.kind, mimeType: slice.mimeType, bytes: slice.bytes };
      if (slice.kind === "text") {
        const window = slice.data.toString("utf16le");
        return { entry, ...textPage(window, slice.from / 2, slice.stored / 2, asked) };
      }
      return { entry, ...blobPage(slice.data, slice.from, slice.stored, asked) };
    },
    async sweep() {
      await table.sweep().catch((error) => logger.debug(`sweeping kept results: ${describeError(error)}`));
    },
  };
}
