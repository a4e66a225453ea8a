/**
 * When a failed or crashed server is started again. Retries back off exponentially with jitter
 * (servers that failed together do not retry together), and a server whose last starts all failed
 * has its circuit opened: calls fail at once with the reason and when the next try is, instead of
 * each call starting it again; only the background retry tries, and a success closes the circuit.
 * A server that dies soon after it connected counts as failing again, so a crash loop backs off
 * like a server that never starts.
 */
export interface RetryPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { initialDelayMs: 5_000, maxDelayMs: 300_000 };

/** Failed starts in a row (or crashes soon after starting) that open the circuit. */
export const CIRCUIT_THRESHOLD = 3;

/** A connection that lived this long was a success: the failure count starts again. */
const STABLE_AFTER_MS = 30_000;

/** Between half and all of the exponential delay for this many failures. */
export function backoffDelay(policy: RetryPolicy, failures: number, random = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, failures - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** The failure count after a connection ended: a short-lived one continues the run, a stable one starts afresh. */
export function failuresAfterClose(failures: number, livedMs: number): number {
  return livedMs < STABLE_AFTER_MS ? failures + 1 : 1;
}

export function isCircuitOpen(failures: number): boolean {
  return failures >= CIRCUIT_THRESHOLD;
}
