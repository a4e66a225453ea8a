import type { CallLimits } from "../config/limit-settings.ts";
import { type CallGate, createCallGate, limitError, limitRefusalOf } from "./call-gate.ts";

/**
 * Per-principal call quotas (`mcpproxy.httpAuth.callsPerMinute`, or an access rule's own): each
 * principal the HTTP listener admitted has a token bucket of `perMinute` calls that refills over a
 * minute (call-gate.ts with no queue: a call over the quota is refused at once, with when to try
 * again, and never waits). Buckets are kept for the `maxPrincipals` principals seen last; one
 * forgotten starts full again when it comes back. With a shared store, `makeGate` gives gates whose
 * buckets all replicas share (shared-rate-gate.ts), keyed by the principal's key.
 */
export interface QuotaHolder {
  /** The principal's key (access-token.ts). */
  key: string;
  subject: string;
  /** Its access rule's quota, which wins over the default (0: none). */
  callsPerMinute?: number | undefined;
}

export interface PrincipalQuotas {
  /** Takes one call of the principal's quota, or throws CALL_LIMITED (limitRefusalOf reads it). */
  take(holder: QuotaHolder, server: string): Promise<void>;
}

const MAX_PRINCIPALS = 10_000;

export function createPrincipalQuotas(
  defaultPerMinute: number,
  maxPrincipals = MAX_PRINCIPALS,
  now?: () => number,
  makeGate: (holder: QuotaHolder, limits: CallLimits) => CallGate = (holder, limits) =>
    createCallGate(holder.subject, limits, now),
): PrincipalQuotas {
  const gates = new Map<string, { gate: CallGate; perMinute: number }>();
  const gateOf = (holder: QuotaHolder, perMinute: number) => {
    const known = gates.get(holder.key);
    // Seen again: moved to the back, so the principals seen least lately are forgotten first.
    if (known) gates.delete(holder.key);
    const entry =
      known?.perMinute === perMinute
        ? known
        : {
            perMinute,
            gate: makeGate(holder, {
              rateLimit: { perMinute, burst: perMinute },
              queueSize: 0,
              queueTimeoutMs: 0,
            }),
          };
    gates.set(holder.key, entry);
    if (gates.size > maxPrincipals) gates.delete(gates.keys().next().value!);
    return entry.gate;
  };
  return {
    async take(holder, server) {
      const perMinute = holder.callsPerMinute ?? defaultPerMinute;
      if (perMinute <= 0) return;
      try {
        (await gateOf(holder, perMinute).enter()).release();
      } catch (error) {
        const refusal = limitRefusalOf(error);
        if (!refusal) throw error;
        const seconds = Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
        throw limitError(
          { server, limit: "rate", retryAfterMs: refusal.retryAfterMs },
          `Your call quota of ${perMinute} calls a minute is used up (set by the person who runs this proxy, ` +
            `mcpproxy.httpAuth). Try again in ${seconds} s.`,
        );
      }
    },
  };
}
