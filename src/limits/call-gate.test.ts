import { describe, expect, test } from "bun:test";
import type { CallLimits } from "../config/limit-settings.ts";
import { type Admission, createCallGate, limitRefusalOf } from "./call-gate.ts";
import { createTokenBucket } from "./token-bucket.ts";

const limits = (overrides: Partial<CallLimits>): CallLimits => ({
  queueSize: 100,
  queueTimeoutMs: 10_000,
  ...overrides,
});

/** Settles pending promise callbacks. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("token bucket", () => {
  test("gives a burst at once, then one token per interval", () => {
    const bucket = createTokenBucket({ perMinute: 60, burst: 3 }, 0);
    expect([bucket.take(0), bucket.take(0), bucket.take(0), bucket.take(0)]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(bucket.msUntil(1, 0)).toBe(1000);
    expect(bucket.take(999)).toBe(false);
    expect(bucket.take(1000)).toBe(true);
    // Two more calls need two more seconds.
    expect(bucket.msUntil(2, 1000)).toBe(2000);
  });

  test("never holds more than the burst after a long quiet spell", () => {
    const bucket = createTokenBucket({ perMinute: 600, burst: 2 }, 0);
    expect(bucket.available(3_600_000)).toBe(2);
  });
});

describe("call gate", () => {
  test("lets maxConcurrent calls in and the rest in arrival order as turns end", async () => {
    const gate = createCallGate("s", limits({ maxConcurrent: 2 }));
    const admitted: number[] = [];
    const turns: Admission[] = [];
    const calls = Array.from({ length: 6 }, (_, i) =>
      gate.enter().then((turn) => {
        admitted.push(i);
        turns.push(turn);
      }),
    );
    await tick();
    expect(admitted).toEqual([0, 1]);
    expect(gate.status()).toMatchObject({ inFlight: 2, queued: 4 });
    for (let round = 0; round < 4; round++) {
      turns.shift()!.release();
      await tick();
      expect(gate.status().inFlight).toBe(2);
    }
    expect(admitted).toEqual([0, 1, 2, 3, 4, 5]);
    for (const turn of turns) turn.release();
    await Promise.all(calls);
    expect(gate.status()).toMatchObject({ inFlight: 0, queued: 0, waited: 4 });
  });

  test("a release given twice frees one slot only", async () => {
    const gate = createCallGate("s", limits({ maxConcurrent: 1 }));
    const first = await gate.enter();
    const second = gate.enter();
    const third = gate.enter();
    first.release();
    first.release();
    await tick();
    expect(gate.status()).toMatchObject({ inFlight: 1, queued: 1 });
    (await second).release();
    (await third).release();
  });

  test("refuses at once when the queue is full, saying which limit and when to retry", async () => {
    const gate = createCallGate("busy", limits({ maxConcurrent: 1, queueSize: 1 }));
    const first = await gate.enter();
    const waiting = gate.enter();
    const refused = await gate.enter().catch((error: unknown) => error);
    const refusal = limitRefusalOf(refused);
    expect(refusal).toMatchObject({ server: "busy", limit: "queue" });
    expect(refusal!.retryAfterMs).toBeGreaterThan(0);
    expect((refused as Error).message).toContain("busy");
    expect(gate.status().rejected).toEqual({ rate: 0, concurrency: 0, queue: 1 });
    first.release();
    (await waiting).release();
  });

  test("with no queue, a call over maxConcurrent is refused by the concurrency limit", async () => {
    const gate = createCallGate("s", limits({ maxConcurrent: 1, queueSize: 0 }));
    const first = await gate.enter();
    expect(limitRefusalOf(await gate.enter().catch((e: unknown) => e))?.limit).toBe("concurrency");
    first.release();
    (await gate.enter()).release();
  });

  test("a call that waits past queueTimeoutMs is refused, not left hanging", async () => {
    const gate = createCallGate("s", limits({ maxConcurrent: 1, queueTimeoutMs: 30 }));
    const first = await gate.enter();
    const refusal = limitRefusalOf(await gate.enter().catch((e: unknown) => e));
    expect(refusal?.limit).toBe("concurrency");
    expect(gate.status()).toMatchObject({ queued: 0, inFlight: 1 });
    first.release();
  });

  test("a rate limit lets the burst through and refuses what could not go within queueTimeoutMs", async () => {
    const gate = createCallGate(
      "api",
      limits({ rateLimit: { perMinute: 60, burst: 2 }, queueTimeoutMs: 200 }),
    );
    (await gate.enter()).release();
    (await gate.enter()).release();
    const refused = await gate.enter().catch((e: unknown) => e);
    const refusal = limitRefusalOf(refused);
    expect(refusal?.limit).toBe("rate");
    // The next token is a second away (60 a minute).
    expect(refusal!.retryAfterMs).toBeGreaterThan(500);
    expect(refusal!.retryAfterMs).toBeLessThanOrEqual(1000);
    expect((refused as Error).message).toContain("60 calls a minute");
  });

  test("a rate-limited call waits for its token when that comes within queueTimeoutMs", async () => {
    // 1,200 a minute: a token every 50 ms.
    const gate = createCallGate("api", limits({ rateLimit: { perMinute: 1200, burst: 1 } }));
    (await gate.enter()).release();
    const turn = await gate.enter();
    expect(turn.waitedMs).toBeGreaterThan(0);
    turn.release();
    expect(gate.status().rejected.rate).toBe(0);
  });

  test("a call cancelled while it waits leaves the queue, and the next one takes the turn", async () => {
    const gate = createCallGate("s", limits({ maxConcurrent: 1 }));
    const first = await gate.enter();
    const controller = new AbortController();
    const cancelled = gate.enter(controller.signal);
    const next = gate.enter();
    expect(gate.status().queued).toBe(2);
    controller.abort(new Error("client cancelled"));
    expect(await cancelled.catch((e: Error) => e.message)).toBe("client cancelled");
    expect(gate.status().queued).toBe(1);
    first.release();
    (await next).release();
    expect(gate.status()).toMatchObject({ inFlight: 0, queued: 0 });
  });

  test("raising maxConcurrent lets waiting calls in at once", async () => {
    const gate = createCallGate("s", limits({ maxConcurrent: 1 }));
    const first = await gate.enter();
    const second = gate.enter();
    gate.setLimits(limits({ maxConcurrent: 2 }));
    (await second).release();
    first.release();
  });
});
