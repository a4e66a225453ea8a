import { describe, expect, test } from "bun:test";
import { createClientPriority } from "./client-priority.ts";
import { mapConcurrently } from "./map-concurrently.ts";

describe("client priority", () => {
  test("all workers go while no client asks; past the busy ones they wait while clients ask", () => {
    let now = 1_000;
    const priority = createClientPriority({ busyConcurrency: 2, quietMs: 500, now: () => now });
    expect([0, 1, 2, 31].map((worker) => priority.turn(worker))).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    priority.requested();
    now += 100;
    expect(priority.turn(0)).toBeUndefined();
    expect(priority.turn(1)).toBeUndefined();
    expect(priority.turn(2)).toBeInstanceOf(Promise);
    now += 400; // quiet for 500 ms: full speed again
    expect(priority.turn(2)).toBeUndefined();
  });

  test("a waiting worker goes once the clients have been quiet, not before", async () => {
    const priority = createClientPriority({ busyConcurrency: 1, quietMs: 60 });
    priority.requested();
    const started = performance.now();
    let isGone = false;
    const waiting = priority.turn(1)!.then(() => {
      isGone = true;
    });
    await Bun.sleep(40);
    priority.requested(); // still asking: the wait starts over
    await Bun.sleep(40);
    expect(isGone).toBe(false);
    await waiting;
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
  });

  test("mapConcurrently keeps only the workers its turn lets go, then finishes the rest in order", async () => {
    const priority = createClientPriority({ busyConcurrency: 2, quietMs: 100 });
    priority.requested();
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    const results = await mapConcurrently(
      Array.from({ length: 30 }, (_, i) => i),
      8,
      async (item) => {
        started.push(performance.now());
        inFlight++;
        most = Math.max(most, inFlight);
        await Bun.sleep(20);
        inFlight--;
        return item * 10;
      },
      priority.turn,
    );
    expect(results).toEqual(Array.from({ length: 30 }, (_, i) => i * 10));
    // While the client was recent (100 ms), two at a time; then the other workers joined in.
    expect(started.filter((at) => at - started[0]! < 15)).toHaveLength(2);
    expect(most).toBeGreaterThan(2);
  });

  test("while clients ask, a busy worker starts a connect at most once per pace, and goes on doing so", () => {
    let now = 1_000;
    const priority = createClientPriority({ busyConcurrency: 1, quietMs: 500, paceMs: 50, now: () => now });
    priority.requested();
    expect(priority.turn(0)).toBeUndefined();
    now += 10;
    expect(priority.turn(0)).toBeInstanceOf(Promise);
    for (let i = 0; i < 20; i++) {
      // Clients keep asking: the pass is paced, never stopped.
      now += 50;
      priority.requested();
      expect(priority.turn(0)).toBeUndefined();
      expect(priority.turn(0)).toBeInstanceOf(Promise);
    }
    now += 500; // quiet: no pace
    expect(priority.turn(0)).toBeUndefined();
    expect(priority.turn(0)).toBeUndefined();
  });
});
