import * as v from "valibot";

/**
 * The call limits a person sets (src/limits/): `rateLimit`, `maxConcurrent`, `queueSize` and
 * `queueTimeoutMs`, per server and as proxy-wide defaults in `mcpproxy`. A server's own value wins;
 * `rateLimit: false` and `maxConcurrent: 0` turn a default off for one server. Agents cannot set
 * them (src/security/agent-edits.ts): a server an agent adds gets the person's defaults.
 */
export const DEFAULT_QUEUE_SIZE = 100;
export const DEFAULT_QUEUE_TIMEOUT_MS = 30_000;

const RATE_MESSAGE =
  'must be {"perMinute": N, "burst": B}, a string such as "60/min" or "10/s burst 20", or false';
const UNIT_MINUTES: Record<string, number> = { s: 1 / 60, m: 1, h: 60 };
const RATE_TEXT =
  /^(\d+(?:\.\d+)?)\s*\/\s*(s|sec|second|m|min|minute|h|hr|hour)\s*(?:[,;]?\s*burst\s*[=:]?\s*(\d+))?$/i;

/**
 * One second's calls, at least one: calls are spaced evenly unless the person allows a burst, so
 * a limit of 60 a minute never sends the upstream 60 at once.
 */
const defaultBurst = (perMinute: number) => Math.max(1, Math.ceil(perMinute / 60));

function rateOf(perMinute: number, burst: number | undefined): RateLimit | string {
  if (!(perMinute > 0) || perMinute > 1_000_000)
    return "the rate must be more than 0 and at most 1000000 a minute";
  if (burst !== undefined && !(Number.isInteger(burst) && burst >= 1 && burst <= 100_000))
    return "burst must be a whole number from 1 to 100000";
  return { perMinute, burst: burst ?? defaultBurst(perMinute) };
}

/** `rateLimit`: an object, a short string (what MCPPROXY_RATE_LIMIT holds), or false/"off" for none. */
export const RateLimitSchema = v.pipe(
  v.unknown(),
  v.rawTransform(({ dataset, addIssue, NEVER }): RateLimit | false => {
    const input = dataset.value;
    if (input === false || (typeof input === "string" && /^(off|none|false)$/i.test(input.trim())))
      return false;
    let result: RateLimit | string = RATE_MESSAGE;
    if (typeof input === "string") {
      const match = RATE_TEXT.exec(input.trim());
      if (match) {
        const minutes = UNIT_MINUTES[match[2]!.toLowerCase()[0]!]!;
        result = rateOf(Number(match[1]) / minutes, match[3] === undefined ? undefined : Number(match[3]));
      }
    } else if (input !== null && typeof input === "object" && !Array.isArray(input)) {
      const { perMinute, burst, ...rest } = input as Record<string, unknown>;
      const extra = Object.keys(rest);
      if (extra.length > 0) result = `has an unknown key ${extra[0]}: ${RATE_MESSAGE}`;
      else if (typeof perMinute === "number" && (burst === undefined || typeof burst === "number"))
        result = rateOf(perMinute, burst);
    }
    if (typeof result === "string") {
      addIssue({ message: result });
      return NEVER;
    }
    return result;
  }),
);

const wholeNumber = (min: number, max: number) => {
  const message = `must be a whole number from ${min} to ${max}`;
  return v.pipe(v.number(message), v.integer(message), v.minValue(min, message), v.maxValue(max, message));
};

export const MAX_CONCURRENT_BOUND = 10_000;
export const QUEUE_SIZE_BOUND = 100_000;
export const QUEUE_TIMEOUT_BOUND = 3_600_000;

/** The keys a server entry may carry (server-schema.ts spreads them into its server schemas). */
export const serverLimitKeys = {
  /** Calls a minute and a burst, as a token bucket; `false` turns the proxy-wide default off. */
  rateLimit: v.optional(RateLimitSchema),
  /** Calls in flight at once (0: no bound, the proxy-wide default off). */
  maxConcurrent: v.optional(wholeNumber(0, MAX_CONCURRENT_BOUND)),
  /** Calls that may wait for a turn (0: an over-limit call is refused at once). */
  queueSize: v.optional(wholeNumber(0, QUEUE_SIZE_BOUND)),
  /** The longest a call waits for its turn, in ms. */
  queueTimeoutMs: v.optional(wholeNumber(0, QUEUE_TIMEOUT_BOUND)),
};

export const LIMIT_KEYS = Object.keys(serverLimitKeys) as (keyof typeof serverLimitKeys)[];

export interface LimitSettings {
  rateLimit: RateLimit | false;
  maxConcurrent: number;
  queueSize: number;
  queueTimeoutMs: number;
}

/**
 * A server's limits: its own values over the proxy-wide ones. Undefined when neither limit applies
 * (then calls go straight through, with no gate at all).
 */
export function resolveLimits(own: Partial<LimitSettings>, defaults: LimitSettings): CallLimits | undefined {
  const rateLimit = own.rateLimit ?? defaults.rateLimit;
  const maxConcurrent = own.maxConcurrent ?? defaults.maxConcurrent;
  if (rateLimit === false && maxConcurrent === 0) return undefined;
  return {
    ...(rateLimit !== false ? { rateLimit } : {}),
    ...(maxConcurrent > 0 ? { maxConcurrent } : {}),
    queueSize: own.queueSize ?? defaults.queueSize,
    queueTimeoutMs: own.queueTimeoutMs ?? defaults.queueTimeoutMs,
  };
}

/** One server's call limits, resolved: what its door (limits/call-gate.ts) enforces. */
export interface CallLimits {
  rateLimit?: RateLimit | undefined;
  /** Calls in flight at once; unset, no bound. */
  maxConcurrent?: number | undefined;
  /** Calls that may wait at once (0: none wait, an over-limit call is refused at once). */
  queueSize: number;
  /** The longest a call waits for its turn, in ms. */
  queueTimeoutMs: number;
}

/** A rate limit: the token bucket of limits/token-bucket.ts. */
export interface RateLimit {
  /** Calls a minute, sustained. */
  perMinute: number;
  /** Calls that may go at once after a quiet spell (the bucket's size), at least 1. */
  burst: number;
}
