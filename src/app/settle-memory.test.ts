import { describe, expect, test } from "bun:test";
import { silentLogger } from "../log.ts";
import { settleMemoryAfter } from "./settle-memory.ts";

describe("settleMemoryAfter", () => {
  test("hands memory back once, after start-up is over", async () => {
    const steps: string[] = [];
    let over: (() => void) | undefined;
    const startUp = new Promise<void>((resolve) => {
      over = resolve;
    });
    settleMemoryAfter(startUp, { logger: silentLogger, afterMs: 0, shrink: () => steps.push("shrink") });
    await Bun.sleep(20);
    steps.push("start-up over");
    over?.();
    await Bun.sleep(50);
    expect(steps).toEqual(["start-up over", "shrink"]);
  });

  test("waits for what start-up set off to be done, looking again until it is", async () => {
    let looks = 0;
    let shrinks = 0;
    settleMemoryAfter(Promise.resolve(), {
      logger: silentLogger,
      afterMs: 5,
      isQuiet: () => ++looks >= 3,
      shrink: () => shrinks++,
    });
    await Bun.sleep(100);
    expect(looks).toBe(3);
    expect(shrinks).toBe(1);
  });

  test("hands back anyway once it has waited its longest for the quiet", async () => {
    let shrinks = 0;
    settleMemoryAfter(Promise.resolve(), {
      logger: silentLogger,
      afterMs: 5,
      atMostMs: 20,
      isQuiet: () => false,
      shrink: () => shrinks++,
    });
    await Bun.sleep(100);
    expect(shrinks).toBe(1);
  });

  test("a look that fails counts as quiet", async () => {
    let shrinks = 0;
    settleMemoryAfter(Promise.resolve(), {
      logger: silentLogger,
      afterMs: 5,
      isQuiet: () => {
        throw new Error("the catalog is closed");
      },
      shrink: () => shrinks++,
    });
    await Bun.sleep(50);
    expect(shrinks).toBe(1);
  });

  test("not when serve stops first, nor when start-up failed", async () => {
    let shrinks = 0;
    const shrink = () => shrinks++;
    const stop = settleMemoryAfter(Bun.sleep(10), { logger: silentLogger, afterMs: 0, shrink });
    stop();
    const stopWaiting = settleMemoryAfter(Promise.resolve(), { logger: silentLogger, afterMs: 30, shrink });
    await Bun.sleep(5);
    stopWaiting();
    settleMemoryAfter(Promise.reject(new Error("no start")), { logger: silentLogger, afterMs: 0, shrink });
    const stopLooking = settleMemoryAfter(Promise.resolve(), {
      logger: silentLogger,
      afterMs: 5,
      isQuiet: () => false,
      shrink,
    });
    await Bun.sleep(20);
    stopLooking();
    await Bun.sleep(80);
    expect(shrinks).toBe(0);
  });
});
