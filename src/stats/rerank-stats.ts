import {
  emptyHistogram,
  fromStored,
  type LatencyHistogram,
  merge,
  observe,
  percentile,
} from "./latency-histogram.ts";

/**
 * What the chat model of `llm` search mode cost, per model: requests sent, their latency (mean and
 * p95, timeouts included: that is what the searches waited) and the tokens the endpoint reported
 * (`usage`), searches answered from the cache, and fallbacks to the search's own order with the
 * last reason. Kept in memory and saved with the call statistics (call-stats.ts) in their own
 * table of stats.db, one row per model; a search adds a few numbers, never a disk write.
 */
export interface RerankRecord {
  model: string;
  /** `cached`: answered from the cache, nothing sent. */
  outcome: "ranked" | "fallback" | "cached";
  /** How long the request took (not for `cached`). */
  ms?: number | undefined;
  promptTokens?: number | undefined;
  completionTokens?: number | undefined;
  /** Why the search's own order was kept (`fallback`). */
  reason?: string | undefined;
}

export interface RerankTally {
  requests: number;
  ranked: number;
  fallbacks: number;
  cacheHits: number;
  totalMs: number;
  latency: LatencyHistogram;
  promptTokens: number;
  completionTokens: number;
  lastFallback?: string | undefined;
  lastFallbackAt?: number | undefined;
}

export interface RerankFigures {
  model: string;
  /** Requests sent to the endpoint. */
  requests: number;
  /** Of those, answers that re-ranked the search. */
  ranked: number;
  /** Searches that kept their own order (a timeout, an error, an unusable answer). */
  fallbacks: number;
  /** Searches answered from the cache: no request. */
  cacheHits: number;
  meanMs: number;
  p95Ms: number;
  promptTokens: number;
  completionTokens: number;
  meanPromptTokens: number;
  meanCompletionTokens: number;
  lastFallback?: string | undefined;
  lastFallbackAt?: string | undefined;
}

export const emptyRerankTally = (): RerankTally => ({
  requests: 0,
  ranked: 0,
  fallbacks: 0,
  cacheHits: 0,
  totalMs: 0,
  latency: emptyHistogram(),
  promptTokens: 0,
  completionTokens: 0,
});

export function recordRerank(tally: RerankTally, record: RerankRecord, now: number): void {
  if (record.outcome === "cached") {
    tally.cacheHits++;
    return;
  }
  if (record.ms !== undefined) {
    tally.requests++;
    tally.totalMs += record.ms;
    observe(tally.latency, record.ms);
  }
  tally.promptTokens += record.promptTokens ?? 0;
  tally.completionTokens += record.completionTokens ?? 0;
  if (record.outcome === "ranked") tally.ranked++;
  else {
    tally.fallbacks++;
    tally.lastFallback = record.reason?.slice(0, 200);
    tally.lastFallbackAt = now;
  }
}

const COUNTS = [
  "requests",
  "ranked",
  "fallbacks",
  "cacheHits",
  "totalMs",
  "promptTokens",
  "completionTokens",
] as const;

export function addRerank(into: RerankTally, from: RerankTally): RerankTally {
  for (const key of COUNTS) into[key] += from[key];
  merge(into.latency, from.latency);
  if ((from.lastFallbackAt ?? 0) > (into.lastFallbackAt ?? 0)) {
    into.lastFallback = from.lastFallback;
    into.lastFallbackAt = from.lastFallbackAt;
  }
  return into;
}

export function rerankFigures(model: string, t: RerankTally): RerankFigures {
  const mean = (total: number) => (t.requests ? Math.round((total / t.requests) * 100) / 100 : 0);
  return {
    model,
    requests: t.requests,
    ranked: t.ranked,
    fallbacks: t.fallbacks,
    cacheHits: t.cacheHits,
    meanMs: mean(t.totalMs),
    p95Ms: Math.round(percentile(t.latency, 0.95) * 100) / 100,
    promptTokens: t.promptTokens,
    completionTokens: t.completionTokens,
    meanPromptTokens: mean(t.promptTokens),
    meanCompletionTokens: mean(t.completionTokens),
    ...(t.lastFallback ? { lastFallback: t.lastFallback } : {}),
    ...(t.lastFallbackAt ? { lastFallbackAt: new Date(t.lastFallbackAt).toISOString() } : {}),
  };
}

/** A tally as stats.db or the shared store keeps it (JSON). */
export function parseRerankTally(text: string): RerankTally {
  const stored = JSON.parse(text) as RerankTally;
  return { ...emptyRerankTally(), ...stored, latency: fromStored(stored.latency) };
}
