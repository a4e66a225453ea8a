import { redactSecrets } from "../security/redact-secrets.ts";
import type { CallRecord, ToolStats } from "./call-record.ts";
import {
  emptyHistogram,
  fromStored,
  type LatencyHistogram,
  merge,
  observe,
  percentile,
} from "./latency-histogram.ts";

/** One tool's counts as kept in memory and stored (JSON) in stats.db; `figures` is what is shown. */
export interface Tally {
  calls: number;
  successes: number;
  isErrors: number;
  errors: number;
  timeouts: number;
  limited: number;
  totalMs: number;
  afterSearch: number;
  latency: LatencyHistogram;
  lastError?: string | undefined;
  lastErrorAt?: number | undefined;
  lastCalledAt: number;
}

export const emptyTally = (): Tally => ({
  calls: 0,
  successes: 0,
  isErrors: 0,
  errors: 0,
  timeouts: 0,
  limited: 0,
  totalMs: 0,
  afterSearch: 0,
  latency: emptyHistogram(),
  lastCalledAt: 0,
});

/** A tally as stored; the first format kept its latencies in `histogram` (latency-histogram.ts). */
export function parseTally(text: string): Tally {
  const { histogram, latency, ...rest } = JSON.parse(text) as Tally & { histogram?: unknown };
  // Tallies saved before the call limits have no `limited`.
  return { ...rest, limited: rest.limited ?? 0, latency: fromStored(latency ?? histogram) };
}

/** Counts one call into `t`. */
export function countCall(t: Tally, call: CallRecord, now: number): void {
  if (call.outcome === "limited") {
    t.limited++;
    return;
  }
  t.calls++;
  t.totalMs += call.ms;
  observe(t.latency, call.ms);
  t.lastCalledAt = now;
  if (call.afterSearch) t.afterSearch++;
  if (call.outcome === "ok") {
    t.successes++;
    return;
  }
  if (call.outcome === "isError") t.isErrors++;
  else if (call.outcome === "timeout") t.timeouts++;
  else t.errors++;
  // An upstream's error text may echo a token it was given; it is shown to people and agents.
  t.lastError = call.error === undefined ? undefined : redactSecrets(call.error.slice(0, 500));
  t.lastErrorAt = now;
}

export function add(into: Tally, from: Tally): Tally {
  for (const key of [
    "calls",
    "successes",
    "isErrors",
    "errors",
    "timeouts",
    "limited",
    "totalMs",
    "afterSearch",
  ] as const)
    into[key] += from[key];
  merge(into.latency, from.latency);
  if ((from.lastErrorAt ?? 0) > (into.lastErrorAt ?? 0)) {
    into.lastError = from.lastError;
    into.lastErrorAt = from.lastErrorAt;
  }
  into.lastCalledAt = Math.max(into.lastCalledAt, from.lastCalledAt);
  return into;
}

export function figures(server: string, tool: string, t: Tally): ToolStats {
  const p95 = percentile(t.latency, 0.95);
  return {
    server,
    tool,
    calls: t.calls,
    successes: t.successes,
    isErrors: t.isErrors,
    errors: t.errors,
    timeouts: t.timeouts,
    limited: t.limited,
    meanMs: t.calls ? Math.round((t.totalMs / t.calls) * 100) / 100 : 0,
    p50Ms: Math.round(percentile(t.latency, 0.5) * 100) / 100,
    p95Ms: Math.round(p95 * 100) / 100,
    afterSearch: t.afterSearch,
    ...(t.lastError ? { lastError: t.lastError } : {}),
    ...(t.lastErrorAt ? { lastErrorAt: new Date(t.lastErrorAt).toISOString() } : {}),
    lastCalledAt: new Date(t.lastCalledAt).toISOString(),
  };
}
