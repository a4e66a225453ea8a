/**
 * Call latencies as a sparse log-scale histogram, for the p95 of `stats` and `tools_stat`.
 * Buckets are 1/16 of an octave wide (each about 4.4% above the one before), so the middle of a
 * bucket is within 2.2% of any value in it; with the fastest and slowest calls kept exactly, a
 * percentile is never reported outside what was observed. Only buckets that hold calls are stored:
 * a tool's latencies usually span two or three octaves, a few dozen numbers.
 * The power-of-two buckets of the first stats.db (an array of 44 counts, bucket i up to 2^(i/2) ms)
 * are read as calls at their bucket's upper bound, which is what that p95 reported.
 */
export interface LatencyHistogram {
  /** Bucket index → calls; bucket i holds latencies in (2^((i-1)/16), 2^(i/16)] ms. */
  buckets: Record<string, number>;
  minMs?: number | undefined;
  maxMs?: number | undefined;
}

const PER_OCTAVE = 16;
/** Faster than this is counted as this: the clock's resolution through a process boundary. */
const FLOOR_MS = 0.01;

const bucketOf = (ms: number) => Math.ceil(PER_OCTAVE * Math.log2(Math.max(ms, FLOOR_MS)));
/** The geometric middle of bucket i. */
const middleOf = (i: number) => 2 ** ((i - 0.5) / PER_OCTAVE);

export const emptyHistogram = (): LatencyHistogram => ({ buckets: {} });

export function observe(histogram: LatencyHistogram, ms: number): void {
  const i = bucketOf(ms);
  histogram.buckets[i] = (histogram.buckets[i] ?? 0) + 1;
  histogram.minMs = histogram.minMs === undefined ? ms : Math.min(histogram.minMs, ms);
  histogram.maxMs = histogram.maxMs === undefined ? ms : Math.max(histogram.maxMs, ms);
}

/**
 * Adds `from` into `into` (figures of one tool from disk and from memory). Extremes stay known only
 * while both sides know theirs: calls read from the first format have none, and a merged maximum
 * taken from the newer calls alone would cap the p95 below an old slow call.
 */
export function merge(into: LatencyHistogram, from: LatencyHistogram): LatencyHistogram {
  const extreme = (
    a: LatencyHistogram,
    b: LatencyHistogram,
    key: "minMs" | "maxMs",
    f: (x: number, y: number) => number,
  ) => {
    const [x, y] = [a[key], b[key]];
    if ((x === undefined && hasCalls(a)) || (y === undefined && hasCalls(b))) return undefined;
    return x === undefined ? y : y === undefined ? x : f(x, y);
  };
  const minMs = extreme(into, from, "minMs", Math.min);
  const maxMs = extreme(into, from, "maxMs", Math.max);
  for (const [i, n] of Object.entries(from.buckets)) into.buckets[i] = (into.buckets[i] ?? 0) + n;
  into.minMs = minMs;
  into.maxMs = maxMs;
  return into;
}

const hasCalls = (histogram: LatencyHistogram) => Object.keys(histogram.buckets).length > 0;

/** The latency below which `fraction` of the calls fell (nearest rank), or 0 with no calls. */
export function percentile(histogram: LatencyHistogram, fraction: number): number {
  const entries = Object.entries(histogram.buckets)
    .map(([i, n]) => [Number(i), n] as const)
    .sort((a, b) => a[0] - b[0]);
  const calls = entries.reduce((sum, [, n]) => sum + n, 0);
  if (calls === 0) return 0;
  const rank = Math.max(1, Math.ceil(fraction * calls));
  let seen = 0;
  for (const [i, n] of entries) {
    seen += n;
    if (seen < rank) continue;
    const { minMs = 0, maxMs = Number.POSITIVE_INFINITY } = histogram;
    return Math.min(maxMs, Math.max(minMs, middleOf(i)));
  }
  return histogram.maxMs ?? 0;
}

/** A histogram as stored: the sparse one, or the first format's array of 44 power-of-two buckets. */
export function fromStored(stored: unknown): LatencyHistogram {
  if (Array.isArray(stored)) {
    const histogram = emptyHistogram();
    stored.forEach((n, i) => {
      if (typeof n === "number" && n > 0) {
        const at = bucketOf(2 ** (i / 2));
        histogram.buckets[at] = (histogram.buckets[at] ?? 0) + n;
      }
    });
    return histogram;
  }
  const value = (stored ?? {}) as Partial<LatencyHistogram>;
  return {
    buckets: { ...(value.buckets ?? {}) },
    ...(typeof value.minMs === "number" ? { minMs: value.minMs } : {}),
    ...(typeof value.maxMs === "number" ? { maxMs: value.maxMs } : {}),
  };
}
