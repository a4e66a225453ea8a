import { describe, expect, test } from "bun:test";
import type { ToolStats } from "../stats/call-record.ts";
import { activityView, startActivitySamples } from "./activity-view.ts";

const tool = (calls: number, failed = 0, lastError?: string): ToolStats => ({
  server: "fx",
  tool: "echo",
  calls,
  successes: calls - failed,
  isErrors: failed,
  errors: 0,
  timeouts: 0,
  limited: 0,
  meanMs: 3,
  p50Ms: 2,
  p95Ms: 9,
  afterSearch: 0,
  lastCalledAt: "2026-11-29T00:00:00Z",
  ...(lastError ? { lastError } : {}),
});

describe("the activity", () => {
  test("samples the calls and failures made between two samples, and a reset is no negative count", () => {
    let stats = [tool(0)];
    const samples = startActivitySamples(() => stats, { everyMs: 3_600_000, keep: 3 });
    try {
      stats = [tool(5, 1)];
      samples.sample();
      stats = [tool(2)];
      samples.sample();
      const taken = samples.samples();
      expect(taken[0]).toMatchObject({ calls: 5, failed: 1 });
      expect(taken[1]).toMatchObject({ calls: 0, failed: 0 });
      samples.sample();
      samples.sample();
      expect(samples.samples().length).toBe(3);
    } finally {
      samples.stop();
    }
  });

  test("draws a bar a sample, failures on top, and shows a tool's last error redacted and escaped", () => {
    const page = activityView(
      [tool(7, 2, "<b>boom</b> Authorization: Bearer sk-live-abcdefghijklmnopqrstuvwx")],
      [
        { at: 1, calls: 4, failed: 1 },
        { at: 2, calls: 2, failed: 0 },
      ],
      false,
    );
    expect(page.match(/class="bar"/g)?.length).toBe(2);
    expect(page.match(/class="bar-bad"/g)?.length).toBe(1);
    expect(page).toContain("the highest bar is 4 calls");
    expect(page).not.toContain("<b>boom");
    expect(page).not.toContain("sk-live-abcdefghijklmnopqrstuvwx");
    expect(page).toContain("set mcpproxy.logFile");
  });
});
