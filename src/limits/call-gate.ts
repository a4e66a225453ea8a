import type { CallLimits, RateLimit } from "../config/limit-settings.ts";
import { ProxyError } from "../errors.ts";
import { createTokenBucket, type TokenBucket } from "./token-bucket.ts";

/**
 * The door of one upstream server (per-server quotas, Smart MCP Proxy design §7): at most
 * `maxConcurrent` calls in flight and at most `rateLimit` calls a minute. A call over either waits
 * in one first-in-first-out queue (fair: no call is overtaken) while the queue has room and the
 * wait can end within `queueTimeoutMs`; otherwise it is refused at once, with the limit that
 * refused it and when trying again makes sense. A call cancelled while it waits leaves the queue.
 * Nothing here ever hangs: every waiter has its timer.
 */

/** Which limit refused a call: too many a minute, too many at once, or the queue was full. */
export type LimitKind = "rate" | "concurrency" | "queue";

export interface LimitRefusal {
  server: string;
  limit: LimitKind;
  /** When trying again makes sense, in ms from now (an estimate for `concurrency` and `queue`). */
  retryAfterMs: number;
}

export interface GateStatus {
  maxConcurrent?: number | undefined;
  rateLimit?: RateLimit | undefined;
  queueSize: number;
  queueTimeoutMs: number;
  inFlight: number;
  queued: number;
  /** Calls refused since the proxy started, by the limit that refused them. */
  rejected: Record<LimitKind, number>;
  /** Calls that had to wait for their turn, and how long they waited in all (ms). */
  waited: number;
  waitedMs: number;
}

export interface Admission {
  /** Ends the call's turn (once; later calls do nothing). */
  release(): void;
  /** How long the call waited in the queue, in ms (0: it went straight in). */
  waitedMs: number;
}

export interface CallGate {
  /** The call's turn: at once, after a wait, or a CALL_LIMITED error saying which limit and when to retry. */
  enter(signal?: AbortSignal): Promise<Admission>;
  status(): GateStatus;
  /** New limits for calls from now on (a config edit): waiting calls are judged by them as they move. */
  setLimits(limits: CallLimits): void;
}

/** Makes a server's gate: call-gate.ts's own, or one whose rate is shared (shared-rate-gate.ts). */
export type CallGateFactory = (server: string, limits: CallLimits) => CallGate;

/** The error a refused call gets; `limitRefusalOf` reads it back. */
export function limitError(refusal: LimitRefusal, message: string): ProxyError {
  return new ProxyError("CALL_LIMITED", message, { cause: refusal });
}

export function limitRefusalOf(error: unknown): LimitRefusal | undefined {
  return error instanceof ProxyError && error.code === "CALL_LIMITED"
    ? (error.cause as LimitRefusal)
    : undefined;
}

/** Where a refused call's result says which limit refused it and when to retry (`_meta`). */
export const LIMIT_META_KEY = "mcpproxy/limit";

export function limitMeta(refusal: LimitRefusal, now = Date.now()) {
  return { ...refusal, retryAt: new Date(now + refusal.retryAfterMs).toISOString() };
}

/** The CALL_LIMITED error of a call `limit` refused, saying why and when to try again. */
export function refusalOf(
  server: string,
  limits: CallLimits,
  limit: LimitKind,
  retryAfterMs: number,
  queued: number,
): ProxyError {
  const retry =
    retryAfterMs >= 1000 ? `${Math.ceil(retryAfterMs / 1000)} s` : `${Math.ceil(retryAfterMs)} ms`;
  const why =
    limit === "rate"
      ? `its rate limit of ${limits.rateLimit?.perMinute} calls a minute (burst ${limits.rateLimit?.burst}) is used up`
      : limit === "concurrency"
        ? `all ${limits.maxConcurrent} of its concurrent call slots stayed busy for ${limits.queueTimeoutMs} ms`
        : `${queued} calls already wait for it (its queue holds ${limits.queueSize})`;
  return limitError(
    { server, limit, retryAfterMs: Math.ceil(retryAfterMs) },
    `Server ${server} did not take this call: ${why}. This limit is set by the user in the proxy's config; try again in ${retry}.`,
  );
}

interface Waiter {
  since: number;
  grant(admission: Admission): void;
  refuse(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
  signal?: AbortSignal | undefined;
  onAbort?: (() => void) | undefined;
}

/** Without a record of how long calls take, a refused call is told to try again after this. */
const DEFAULT_RETRY_MS = 1_000;

export function createCallGate(
  server: string,
  initial: CallLimits,
  now: () => number = () => performance.now(),
): CallGate {
  let limits = initial;
  let bucket: TokenBucket | undefined = limits.rateLimit
    ? createTokenBucket(limits.rateLimit, now())
    : undefined;
  const queue: Waiter[] = [];
  let inFlight = 0;
  let waited = 0;
  let waitedMs = 0;
  /** A moving mean of how long a call holds its turn, to say when a slot is likely free. */
  let meanCallMs: number | undefined;
  let pumpTimer: ReturnType<typeof setTimeout> | undefined;
  const rejected: Record<LimitKind, number> = { rate: 0, concurrency: 0, queue: 0 };

  const isFull = () => limits.maxConcurrent !== undefined && inFlight >= limits.maxConcurrent;

  /** A turn given; `since` is when a call that had to wait joined the queue. */
  const admission = (since?: number): Admission => {
    inFlight++;
    const waitedFor = since === undefined ? 0 : now() - since;
    if (since !== undefined) {
      waited++;
      waitedMs += waitedFor;
    }
    const started = now();
    let isReleased = false;
    return {
      waitedMs: waitedFor,
      release() {
        if (isReleased) return;
        isReleased = true;
        inFlight--;
        const held = now() - started;
        meanCallMs = meanCallMs === undefined ? held : 0.8 * meanCallMs + 0.2 * held;
        pump();
      },
    };
  };

  /** When a slot will likely be free for the call `ahead` places back in the queue. */
  const concurrencyRetryMs = (ahead: number) => {
    const slots = limits.maxConcurrent ?? 1;
    const rounds = Math.floor(ahead / slots) + 1;
    return Math.max(1, Math.round((meanCallMs ?? DEFAULT_RETRY_MS) * rounds));
  };

  const refusal = (limit: LimitKind, retryAfterMs: number): ProxyError => {
    rejected[limit]++;
    return refusalOf(server, limits, limit, retryAfterMs, queue.length);
  };
  const leave = (waiter: Waiter) => {
    const at = queue.indexOf(waiter);
    if (at >= 0) queue.splice(at, 1);
    clearTimeout(waiter.timer);
    if (waiter.onAbort) waiter.signal?.removeEventListener("abort", waiter.onAbort);
  };

  /** Lets waiting calls in, in order, while both limits allow; wakes itself when a token is due. */
  const pump = () => {
    if (pumpTimer) {
      clearTimeout(pumpTimer);
      pumpTimer = undefined;
    }
    while (queue.length > 0 && !isFull()) {
      if (bucket && !bucket.take(now())) {
        pumpTimer = setTimeout(pump, Math.max(1, bucket.msUntil(1, now())));
        return;
      }
      const head = queue[0]!;
      leave(head);
      head.grant(admission(head.since));
    }
  };

  return {
    enter(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      const since = now();
      if (queue.length === 0 && !isFull() && (!bucket || bucket.take(since))) {
        return Promise.resolve(admission());
      }
      if (queue.length >= limits.queueSize) {
        // With no queue at all, the limit in the way refuses it; otherwise the full queue does.
        if (limits.queueSize === 0) {
          return Promise.reject(
            isFull() || !bucket
              ? refusal("concurrency", concurrencyRetryMs(0))
              : refusal("rate", bucket.msUntil(1, since)),
          );
        }
        const after = Math.max(
          bucket ? bucket.msUntil(queue.length + 1, since) : 0,
          limits.maxConcurrent !== undefined ? concurrencyRetryMs(queue.length) : 0,
        );
        return Promise.reject(refusal("queue", after));
      }
      // The tokens this call needs come after those of the calls ahead of it.
      const rateWait = bucket ? bucket.msUntil(queue.length + 1, since) : 0;
      if (rateWait > limits.queueTimeoutMs) return Promise.reject(refusal("rate", rateWait));
      return new Promise<Admission>((resolve, reject) => {
        const waiter: Waiter = {
          since,
          grant: resolve,
          refuse: reject,
          signal,
          timer: setTimeout(() => {
            leave(waiter);
            const isRate = !isFull() && bucket !== undefined;
            reject(
              isRate
                ? refusal("rate", bucket!.msUntil(1, now()))
                : refusal("concurrency", concurrencyRetryMs(queue.length)),
            );
          }, limits.queueTimeoutMs),
        };
        if (signal) {
          waiter.onAbort = () => {
            leave(waiter);
            reject(signal.reason);
            // The next in line may go now if this one held up the head.
            pump();
          };
          signal.addEventListener("abort", waiter.onAbort, { once: true });
        }
        queue.push(waiter);
        pump();
      });
    },

    status() {
      return {
        ...(limits.maxConcurrent !== undefined ? { maxConcurrent: limits.maxConcurrent } : {}),
        ...(limits.rateLimit ? { rateLimit: limits.rateLimit } : {}),
        queueSize: limits.queueSize,
        queueTimeoutMs: limits.queueTimeoutMs,
        inFlight,
        queued: queue.length,
        rejected: { ...rejected },
        waited,
        waitedMs: Math.round(waitedMs),
      };
    },

    setLimits(next) {
      const rateChanged = JSON.stringify(next.rateLimit) !== JSON.stringify(limits.rateLimit);
      limits = next;
      if (rateChanged) bucket = next.rateLimit ? createTokenBucket(next.rateLimit, now()) : undefined;
      pump();
    },
  };
}
