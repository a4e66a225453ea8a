import { describe, expect, test } from "bun:test";
import { isReadOnly, riskOf } from "./tool-risk.ts";

const withAnnotations = (annotations?: Record<string, unknown>) => ({
  name: "t",
  inputSchema: { type: "object" },
  ...(annotations ? { annotations } : {}),
});

describe("a tool's risk, from its annotations", () => {
  test("read-only < adds without destroying < may destroy; silence is taken as may destroy (MCP's defaults)", () => {
    expect(riskOf(withAnnotations({ readOnlyHint: true }))).toBe(0);
    // readOnlyHint wins: destructiveHint means nothing for a tool that only reads.
    expect(riskOf(withAnnotations({ readOnlyHint: true, destructiveHint: true }))).toBe(0);
    expect(riskOf(withAnnotations({ readOnlyHint: false, destructiveHint: false }))).toBe(1);
    expect(riskOf(withAnnotations({ destructiveHint: false }))).toBe(1);
    expect(riskOf(withAnnotations({ destructiveHint: true }))).toBe(2);
    expect(riskOf(withAnnotations())).toBe(2);
    expect(riskOf(undefined)).toBe(2);
  });

  test('only the boolean true counts as read-only (an upstream\'s "true" string does not)', () => {
    expect(isReadOnly(withAnnotations({ readOnlyHint: "true" }))).toBe(false);
    expect(riskOf(withAnnotations({ destructiveHint: "false" }))).toBe(2);
    expect(isReadOnly(withAnnotations({ readOnlyHint: true }))).toBe(true);
  });
});
