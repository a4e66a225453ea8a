import type { CallLimits } from "../config/limit-settings.ts";
import type { CallGate, CallGateFactory } from "../limits/call-gate.ts";
import type { QuotaHolder } from "../limits/principal-quotas.ts";
import { createSharedBuckets } from "../limits/shared-buckets.ts";
import { createSharedRateGate, sharedGateFactory } from "../limits/shared-rate-gate.ts";
import type { Logger } from "../log.ts";
import { openSharedCallStats, type SharedCallStats } from "../stats/shared-call-stats.ts";
import { rateBucketsOf } from "../store/postgres/rate-buckets.ts";
import { STATS_CHANGE, statsTablesOf } from "../store/postgres/stats-tables.ts";
import type { SharedStore } from "../store/shared-store.ts";

/**
 * What `serve --store` shares of the call statistics and limits: tallies merged across replicas
 * (stats/shared-call-stats.ts), and rate limits and principal quotas held across them
 * (limits/shared-rate-gate.ts). `maxConcurrent` and the queue stay each replica's own.
 */
export function openStoreStats(store: SharedStore, logger: Logger): Promise<SharedCallStats> {
  return openSharedCallStats(statsTablesOf(store), {
    logger,
    onChange: (handler) => store.changes.on(STATS_CHANGE, (change) => handler(change.subject)),
  });
}

export interface StoreLimits {
  /** Each server's door, its rate held in the store. */
  gateOf: CallGateFactory;
  /** Each principal's quota gate, held in the store. */
  quotaGate: (holder: QuotaHolder, limits: CallLimits) => CallGate;
  close(): void;
}

export function startStoreLimits(store: SharedStore, logger: Logger): StoreLimits {
  const buckets = createSharedBuckets(rateBucketsOf(store), { logger });
  const bucketFor = (key: string, limit: { perMinute: number; burst: number }) => buckets.bucket(key, limit);
  return {
    gateOf: sharedGateFactory(bucketFor),
    quotaGate: (holder, limits) =>
      createSharedRateGate(holder.subject, limits, (limit) => bucketFor(`principal:${holder.key}`, limit)),
    close: () => buckets.close(),
  };
}
