/**
 * When a failed or crashed server is started again. Retries back off exponentially with jitter
 * (servers that failed together do not retry together), and a server whose last starts all failed
 * has its circuit opened: calls fail at once with the reason and when the next try is, instead of
 * each call starting it again; only the background retry tries, and a success closes the circuit.
 * A server that dies soon after it connected counts as failing again, so a crash loop backs off
 * like a server that never starts. A server down for long (`longDownAfterMs` without a connection)
 * is tried less often still (`longDownDelayMs`): a config that lists thousands of unreachable
 * servers must not keep an idle proxy busy (and a retry of an HTTP server whose port refuses ends at a
 * bare TCP connect, port-check.ts, about a tenth of a millisecond instead of 1-2 ms for a full connect).
 * A server that comes back is connected at the next try: within `maxDelayMs`, or `longDownDelayMs`
 * once it was down that long (`upstream_servers` restart or a config change try at once).
 */
export interface RetryPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  /** How long a server must have been down (failing every start since) before it counts as long down. */
  longDownAfterMs?: number | undefined;
  /** The ceiling of the delay for a server down that long (unset: `maxDelayMs` for ever). */
  longDownDelayMs?: number | undefined;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  initialDelayMs: 5_000,
  maxDelayMs: 300_000,
  longDownAfterMs: 600_000,
  longDownDelayMs: 900_000,
};

/** Failed starts in a row (or crashes soon after starting) that open the circuit. */
export const CIRCUIT_THRESHOLD = 3;

/** A connection that lived this long was a success: the failure count starts again. */
const STABLE_AFTER_MS = 30_000;

/**
 * Between half and all of the exponential delay for this many failures; for a server down for
 * `downForMs` past `longDownAfterMs`, of `longDownDelayMs` instead.
 */
export function backoffDelay(
  policy: RetryPolicy,
  failures: number,
  downForMs = 0,
  random = Math.random,
): number {
  const isLongDown =
    policy.longDownAfterMs !== undefined &&
    policy.longDownDelayMs !== undefined &&
    downForMs >= policy.longDownAfterMs;
  const ceiling = isLongDown
    ? Math.max(policy.longDownDelayMs!, policy.maxDelayMs)
    : Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, failures - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** The failure count after a connection ended: a short-lived one continues the run, a stable one starts afresh. */
export function failuresAfterClose(failures: number, livedMs: number): number {
  return livedMs < STABLE_AFTER_MS ? failures + 1 : 1;
}

export function isCircuitOpen(failures: number): boolean {
  return failures >= CIRCUIT_THRESHOLD;
}
