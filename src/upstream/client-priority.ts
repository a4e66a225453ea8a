/**
 * Clients first while the pool connects its servers. The first pass over thousands of servers runs
 * on the one JavaScript thread that also reads and answers the clients: with CONNECT_CONCURRENCY
 * connects in flight, a request line waited behind every connect step that became ready meanwhile
 * (at 100,000 tools a search over stdio took 10–20 ms p50 while the pass ran, most of it before
 * the line was even read, against about 5 ms with one connect in flight). While clients are asking
 * (a request in the last QUIET_MS), the pass keeps at most BUSY_CONCURRENCY connects going; the
 * others wait for a quiet moment. Connects already under way finish; nothing is cancelled.
 */
export interface ClientPriority {
  /** A client's request arrived (stdio or HTTP). */
  requested(): void;
  /**
   * Undefined when the pass's `worker` (0-based) may start its next connect now; else a promise
   * that resolves once it may (clients quiet for QUIET_MS).
   */
  turn(worker: number): Promise<void> | undefined;
}

/**
 * How many connects the first pass keeps in flight while clients are asking. One: at 10,000 tools
 * a search then took 2.1–2.5 ms p50 over stdio against 2.7–3.2 with two (4.7–5.0 against 6.0–6.2
 * at 100,000). A hung server holds it until its timeout, but only while clients keep asking.
 */
const BUSY_CONCURRENCY = 1;
/**
 * While clients are asking, each of those connects starts at most this often. Back to back, the
 * steps of one connect after another ran between the searches: at 100,000 tools a search over
 * stdio took 5.6–8.4 ms p50 against 3.3–4.2 with no connect at all while clients asked. Paced,
 * the pass still goes on (20 servers a second) however long the clients keep asking.
 */
const BUSY_PACE_MS = 50;
/** How long after a client's last request the pass goes back to full speed. */
const QUIET_MS = 500;

export function createClientPriority(
  options: { busyConcurrency?: number; quietMs?: number; paceMs?: number; now?: () => number } = {},
): ClientPriority {
  const busy = options.busyConcurrency ?? BUSY_CONCURRENCY;
  const quietMs = options.quietMs ?? QUIET_MS;
  const paceMs = options.paceMs ?? BUSY_PACE_MS;
  const now = options.now ?? (() => performance.now());
  let lastRequestAt = Number.NEGATIVE_INFINITY;
  /** When each busy worker last started a connect while clients were asking. */
  const startedAt = new Array<number>(busy).fill(Number.NEGATIVE_INFINITY);
  const turn = (worker: number): Promise<void> | undefined => {
    const wait = lastRequestAt + quietMs - now();
    if (wait <= 0) return undefined;
    // Looked at again then: a request that came meanwhile keeps the pass slow.
    if (worker >= busy) return Bun.sleep(wait).then(() => turn(worker));
    const paced = startedAt[worker]! + paceMs - now();
    if (paced <= 0) {
      startedAt[worker] = now();
      return undefined;
    }
    return Bun.sleep(Math.min(paced, wait)).then(() => turn(worker));
  };
  return {
    requested() {
      lastRequestAt = now();
    },
    turn,
  };
}
