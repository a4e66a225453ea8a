import type { CallLimits, RateLimit } from "../config/limit-settings.ts";
import { type Admission, type CallGate, createCallGate, type LimitKind, refusalOf } from "./call-gate.ts";
import type { SharedBucket } from "./shared-buckets.ts";

/**
 * A server's door when its rate limit is held in the shared store (shared-buckets.ts): the same
 * rules as call-gate.ts, told the same way (CALL_LIMITED with the limit and retryAfterMs), with the
 * rate's tokens taken from a bucket all replicas share. `maxConcurrent` and the queue stay this
 * replica's own (call-gate.ts without the rate): a call first gets a slot, then its token. A call
 * whose token is not there waits in this replica's line, first in first out, while the line has
 * room (queueSize) and the token can come within queueTimeoutMs (judged from what the store said),
 * holding its slot meanwhile; otherwise it is refused at once, as without a store.
 */
export type BucketOf = (limit: RateLimit) => SharedBucket;

interface LineWaiter {
  since: number;
  deadline: number;
  isDone: boolean;
  grant(): void;
  refuse(error: unknown): void;
}

export function createSharedRateGate(
  server: string,
  initial: CallLimits,
  bucketOf: BucketOf,
  now: () => number = () => performance.now(),
): CallGate {
  let limits = initial;
  const withoutRate = (l: CallLimits): CallLimits => ({ ...l, rateLimit: undefined });
  const slots = createCallGate(server, withoutRate(limits), now);
  let bucket = limits.rateLimit ? bucketOf(limits.rateLimit) : undefined;
  const line: LineWaiter[] = [];
  let isRunning = false;
  let refusedByRate = 0;
  let refusedByQueue = 0;
  let waited = 0;
  let waitedMs = 0;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(1, ms)));
  /** How long `ahead` more calls' tokens take at the limit's rate, after the next one. */
  const spacing = (ahead: number) => (limits.rateLimit ? (ahead * 60_000) / limits.rateLimit.perMinute : 0);
  const refuse = (limit: LimitKind, retryAfterMs: number) => {
    if (limit === "rate") refusedByRate++;
    else refusedByQueue++;
    return refusalOf(server, limits, limit, retryAfterMs, line.length);
  };

  /** Gives tokens to the line's calls in order, asking the store again when the next one is due. */
  const runLine = async () => {
    if (isRunning) return;
    isRunning = true;
    try {
      while (line.length > 0 && bucket) {
        const head = line[0]!;
        if (head.isDone) {
          line.shift();
          continue;
        }
        const took = await bucket.take();
        // Timed out or cancelled meanwhile: a token taken goes to the next in line.
        while (line[0]?.isDone) line.shift();
        const next = line[0];
        if (!next) return;
        if (took.taken) {
          line.shift();
          next.isDone = true;
          waited++;
          waitedMs += now() - next.since;
          next.grant();
          continue;
        }
        await sleep(Math.min(took.waitMs, Math.max(1, next.deadline - now())));
      }
    } finally {
      isRunning = false;
    }
  };

  const takeToken = async (turn: Admission, signal: AbortSignal | undefined): Promise<Admission> => {
    const since = now();
    if (line.length === 0) {
      const took = await bucket!.take();
      if (took.taken) return turn;
      const wait = took.waitMs;
      if (limits.queueSize === 0 || wait > limits.queueTimeoutMs) {
        turn.release();
        throw refuse("rate", wait);
      }
    } else if (line.length >= limits.queueSize) {
      turn.release();
      throw refuse("queue", spacing(line.length + 1));
    }
    return new Promise<Admission>((resolve, reject) => {
      const waiter: LineWaiter = {
        since,
        deadline: since + limits.queueTimeoutMs,
        isDone: false,
        grant: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          resolve({ release: () => turn.release(), waitedMs: turn.waitedMs + (now() - since) });
        },
        refuse: (error) => {
          waiter.isDone = true;
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          turn.release();
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        if (!waiter.isDone) waiter.refuse(refuse("rate", spacing(1)));
      }, limits.queueTimeoutMs);
      const onAbort = () => {
        if (!waiter.isDone) waiter.refuse(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      line.push(waiter);
      void runLine();
    });
  };

  return {
    async enter(signal) {
      const turn = await slots.enter(signal);
      if (!bucket) return turn;
      return takeToken(turn, signal);
    },
    status() {
      const inner = slots.status();
      return {
        ...inner,
        ...(limits.rateLimit ? { rateLimit: limits.rateLimit } : {}),
        queued: inner.queued + line.length,
        rejected: {
          ...inner.rejected,
          rate: inner.rejected.rate + refusedByRate,
          queue: inner.rejected.queue + refusedByQueue,
        },
        waited: inner.waited + waited,
        waitedMs: inner.waitedMs + Math.round(waitedMs),
      };
    },
    setLimits(next) {
      const rateChanged = JSON.stringify(next.rateLimit) !== JSON.stringify(limits.rateLimit);
      limits = next;
      slots.setLimits(withoutRate(next));
      if (rateChanged) bucket = next.rateLimit ? bucketOf(next.rateLimit) : undefined;
    },
  };
}

/** The gate of each server: a shared rate where the store holds it, the replica's own otherwise. */
export function sharedGateFactory(
  bucketFor: (key: string, limit: RateLimit) => SharedBucket,
): (server: string, limits: CallLimits) => CallGate {
  return (server, limits) =>
    createSharedRateGate(server, limits, (limit) => bucketFor(`server:${server}`, limit));
}
