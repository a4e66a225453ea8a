import type { RateLimit } from "../config/limit-settings.ts";
import { describeError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { BucketTake, RateBucketStore } from "../store/postgres/rate-buckets.ts";
import { createTokenBucket, type TokenBucket } from "./token-bucket.ts";

/**
 * Rate-limit buckets held in the shared store (store/postgres/rate-buckets.ts), so that a limit of
 * N a minute holds for all replicas together, with what happens when the store cannot be reached:
 * calls are never held up or refused for that. A take that fails or does not answer within
 * `timeoutMs` switches every bucket of this replica to a local one holding its share of the limit
 * (1/replicas of the rate and of the burst, the live replicas as the store last counted them: with
 * every take, and every `replicasMs` while none is taken), said
 * once in the log; the store is asked again every `probeMs` in the background, and when it answers
 * the shared buckets are used again (said too). The replicas together then admit about the limit
 * while the store is away; never more than each replica's share.
 */
export interface SharedBucket {
  take(): Promise<BucketTake>;
}

export interface SharedBuckets {
  bucket(key: string, limit: RateLimit): SharedBucket;
  /** The store could not be reached at the last try: local shares are in use. */
  isFallingBack(): boolean;
  close(): void;
}

export interface SharedBucketsOptions {
  logger: Logger;
  /** The longest a take waits for the store before the local share answers it. */
  timeoutMs?: number;
  probeMs?: number;
  /** How often the number of live replicas is read while the store answers. */
  replicasMs?: number;
  now?: () => number;
}

const withTimeout = <T>(work: Promise<T>, ms: number): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });

export function createSharedBuckets(store: RateBucketStore, options: SharedBucketsOptions): SharedBuckets {
  const { logger } = options;
  const timeoutMs = options.timeoutMs ?? 1_000;
  const now = options.now ?? (() => performance.now());
  let replicas = 1;
  let down: { since: number } | undefined;
  let probe: ReturnType<typeof setInterval> | undefined;
  const local = new Map<string, { limit: string; bucket: TokenBucket }>();

  const readReplicas = () =>
    void withTimeout(store.liveReplicas(), timeoutMs).then(
      (n) => {
        replicas = n;
      },
      () => {},
    );
  readReplicas();
  const counting = setInterval(() => {
    if (!down) readReplicas();
  }, options.replicasMs ?? 10_000);
  counting.unref?.();

  const fallBack = (error: unknown) => {
    if (down) return;
    down = { since: now() };
    logger.warn(
      `rate limits: the shared store cannot be reached (${describeError(error)}); each limit is held on this ` +
        `replica as its 1/${replicas} share until the store answers again`,
    );
    probe = setInterval(() => {
      void withTimeout(store.ping(), timeoutMs).then(
        () => {
          if (!down) return;
          logger.info(
            `rate limits: the shared store answers again after ${Math.round((now() - down.since) / 1000)} s; ` +
              "limits are held across the replicas again",
          );
          down = undefined;
          clearInterval(probe);
          local.clear();
        },
        () => {},
      );
    }, options.probeMs ?? 1_000);
    probe.unref?.();
  };

  const takeLocal = (key: string, limit: RateLimit): BucketTake => {
    const share = {
      perMinute: limit.perMinute / replicas,
      burst: Math.max(1, Math.floor(limit.burst / replicas)),
    };
    const id = JSON.stringify(share);
    let entry = local.get(key);
    if (entry?.limit !== id) {
      entry = { limit: id, bucket: createTokenBucket(share, now()) };
      local.set(key, entry);
    }
    const at = now();
    return entry.bucket.take(at)
      ? { taken: true, waitMs: 0 }
      : { taken: false, waitMs: entry.bucket.msUntil(1, at) };
  };

  return {
    bucket(key, limit) {
      return {
        async take() {
          if (down) return takeLocal(key, limit);
          try {
            const took = await withTimeout(store.take(key, limit), timeoutMs);
            if (took.replicas) replicas = took.replicas;
            return took;
          } catch (error) {
            fallBack(error);
            return takeLocal(key, limit);
          }
        },
      };
    },
    isFallingBack: () => down !== undefined,
    close() {
      clearInterval(counting);
      clearInterval(probe);
    },
  };
}
