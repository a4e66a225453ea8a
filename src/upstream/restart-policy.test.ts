import { describe, expect, test } from "bun:test";
import { backoffDelay, DEFAULT_RETRY_POLICY, type RetryPolicy } from "./restart-policy.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A deterministic stand-in for Math.random: the same spread of jitter on every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/**
 * The background tries a server that never comes back gets over `forMs`, on a simulated clock:
 * each failure schedules the next as server-slot.ts does (its failures in a row, how long it has
 * been down).
 */
function triesOf(policy: RetryPolicy, forMs: number, random = seeded(7)): number[] {
  const tries: number[] = [];
  let now = 0;
  let failures = 1; // the first start failed at 0
  for (;;) {
    now += backoffDelay(policy, failures, now, random);
    if (now > forMs) return tries;
    tries.push(now);
    failures++;
  }
}

const gaps = (tries: number[]) => tries.map((at, i) => at - (tries[i - 1] ?? 0));

describe("retrying a server that stays down", () => {
  test("backs off from seconds to five minutes, then to fifteen once it has been down ten minutes", () => {
    const tries = triesOf(DEFAULT_RETRY_POLICY, 24 * HOUR);
    const early = tries.filter((at) => at <= 10 * MINUTE);
    expect(gaps(early)[0]).toBeLessThanOrEqual(5_000);
    for (const gap of gaps(early)) expect(gap).toBeLessThanOrEqual(5 * MINUTE);
    for (const gap of gaps(tries)) expect(gap).toBeLessThanOrEqual(15 * MINUTE);
    // A day down: 4 to 8 tries an hour after the first ten minutes (every 7.5–15 min), not 12 to 24.
    const later = tries.filter((at) => at > HOUR);
    expect(later.length).toBeGreaterThanOrEqual(23 * 4);
    expect(later.length).toBeLessThanOrEqual(23 * 8);
  });

  test("a policy without a long-down tier keeps its ceiling for ever", () => {
    const tries = triesOf({ initialDelayMs: 5_000, maxDelayMs: 5 * MINUTE }, 24 * HOUR);
    const later = tries.filter((at) => at > HOUR);
    expect(later.length).toBeGreaterThanOrEqual(23 * 12);
    for (const gap of gaps(tries)) expect(gap).toBeLessThanOrEqual(5 * MINUTE);
  });

  test("the delay is between half and all of its ceiling", () => {
    expect(backoffDelay(DEFAULT_RETRY_POLICY, 1, 0, () => 0)).toBe(2_500);
    expect(backoffDelay(DEFAULT_RETRY_POLICY, 1, 0, () => 1)).toBe(5_000);
    expect(backoffDelay(DEFAULT_RETRY_POLICY, 20, 9 * MINUTE, () => 1)).toBe(5 * MINUTE);
    expect(backoffDelay(DEFAULT_RETRY_POLICY, 20, 10 * MINUTE, () => 0)).toBe(7.5 * MINUTE);
  });

  test("down less than ten minutes, each failure's delay is what it was before the long-down tier", () => {
    // The ceilings of 5 s doubling to 5 minutes, for failures 1 to 10, at the low, middle and top of the jitter.
    const ceilings = [5, 10, 20, 40, 80, 160, 300, 300, 300, 300].map((seconds) => seconds * 1_000);
    for (const [i, ceiling] of ceilings.entries()) {
      for (const downFor of [0, MINUTE, 10 * MINUTE - 1]) {
        for (const jitter of [0, 0.5, 1]) {
          expect(backoffDelay(DEFAULT_RETRY_POLICY, i + 1, downFor, () => jitter)).toBe(
            Math.round(ceiling / 2 + (jitter * ceiling) / 2),
          );
        }
      }
    }
  });

  test("down ten minutes or more, the delay is 7.5-15 minutes whatever the failures in a row", () => {
    for (const failures of [1, 2, 3, 10, 50]) {
      for (const downFor of [10 * MINUTE, HOUR, 30 * 24 * HOUR]) {
        expect(backoffDelay(DEFAULT_RETRY_POLICY, failures, downFor, () => 0)).toBe(7.5 * MINUTE);
        expect(backoffDelay(DEFAULT_RETRY_POLICY, failures, downFor, () => 1)).toBe(15 * MINUTE);
      }
    }
  });
});
