import type { RateLimit } from "../config/limit-settings.ts";

/**
 * A token bucket (Smart MCP Proxy design §7: "per-origin quotas, a token bucket keyed by server"):
 * it holds at most `burst` tokens, gains `perMinute` a minute, and a call takes one. Pure: the time
 * is passed in, so the queue (call-gate.ts) and its tests decide the clock.
 */
export interface TokenBucket {
  /** Takes a token if there is one now. */
  take(now: number): boolean;
  /** Milliseconds from `now` until `count` tokens will have been there (0: they are now). */
  msUntil(count: number, now: number): number;
  /** Whole tokens there now. */
  available(now: number): number;
}

export function createTokenBucket(limit: RateLimit, now: number): TokenBucket {
  const perMs = limit.perMinute / 60_000;
  let tokens = limit.burst;
  let at = now;
  const refill = (time: number) => {
    // A clock that goes back (never with performance.now) would otherwise drain the bucket.
    if (time > at) {
      tokens = Math.min(limit.burst, tokens + (time - at) * perMs);
      at = time;
    }
  };
  return {
    take(time) {
      refill(time);
      // A hair under one counts: the refill's floating point must not cost a whole extra wait.
      if (tokens < 1 - 1e-9) return false;
      tokens = Math.max(0, tokens - 1);
      return true;
    },
    msUntil(count, time) {
      refill(time);
      const missing = count - tokens;
      return missing <= 1e-9 ? 0 : Math.ceil(missing / perMs);
    },
    available(time) {
      refill(time);
      return Math.floor(tokens + 1e-9);
    },
  };
}
