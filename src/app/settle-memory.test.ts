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

  test("not when serve stops first, nor when start-up failed", async () => {
    let shrinks = 0;
    const shrink = () => shrinks++;
    const stop = settleMemoryAfter(Bun.sleep(10), { logger: silentLogger, afterMs: 0, shrink });
    stop();
    const stopWaiting = settleMemoryAfter(Promise.resolve(), { logger: silentLogger, afterMs: 30, shrink });
    await Bun.sleep(5);
    stopWaiting();
    settleMemoryAfter(Promise.reject(new Error("no start")), { logger: silentLogger, afterMs: 0, shrink });
    await Bun.sleep(80);
    expect(shrinks).toBe(0);
  });
});
