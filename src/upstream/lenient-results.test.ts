import { describe, expect, test } from "bun:test";
import {
  acceptableCallResult,
  acceptableModernResult,
  SKIPPED_META_KEY,
  skippedIn,
} from "./lenient-results.ts";

const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  inputSchema: { type: "object" },
  ...extra,
});
const http = { checkParamHeaders: true };
const stdio = { checkParamHeaders: false };

describe("a 2026 server's tools/list, made acceptable to the SDK", () => {
  test("keeps the valid tools, leaves out and notes the others with their sizes", () => {
    const result = acceptableModernResult(
      "tools/list",
      {
        resultType: "complete",
        ttlMs: 60_000,
        cacheScope: "public",
        tools: [tool("good"), { name: "no_schema" }, tool("bad_title", { title: 5 }), 42],
      },
      stdio,
    ) as { tools: { name: string }[]; ttlMs: number; cacheScope: string; _meta: unknown };
    expect(result.tools.map((t) => t.name)).toEqual(["good"]);
    expect(result.ttlMs).toBe(60_000);
    expect(result.cacheScope).toBe("public");
    const skipped = skippedIn(result);
    expect(skipped.map((entry) => entry.problem)).toEqual([
      "no_schema (no inputSchema object)",
      expect.stringMatching(/^bad_title \(title: /),
      "an entry that is not an object",
    ]);
    expect(skipped[0]!.bytes).toBe(Buffer.byteLength(JSON.stringify({ name: "no_schema" })));
  });

  test("leaves out a tool with an invalid x-mcp-header over HTTP only", () => {
    const marked = tool("marked", {
      inputSchema: { type: "object", properties: { a: { type: "number", "x-mcp-header": "A" } } },
    });
    const list = { resultType: "complete", ttlMs: 0, cacheScope: "private", tools: [marked] };
    expect((acceptableModernResult("tools/list", list, stdio) as { tools: unknown[] }).tools).toHaveLength(1);
    const overHttp = acceptableModernResult("tools/list", list, http) as { tools: unknown[]; _meta: unknown };
    expect(overHttp.tools).toHaveLength(0);
    expect(skippedIn(overHttp)[0]!.problem).toMatch(/^marked \(invalid x-mcp-header: /);
  });

  test("missing or malformed cache hints become do-not-cache; a bad cursor ends the paging", () => {
    const result = acceptableModernResult(
      "tools/list",
      { resultType: "complete", ttlMs: -5, tools: [], nextCursor: 7 },
      stdio,
    ) as Record<string, unknown>;
    expect(result).toMatchObject({ ttlMs: 0, cacheScope: "private" });
    expect(result).not.toHaveProperty("nextCursor");
  });

  test("replaces whatever the server wrote under the proxy's own key", () => {
    const spoofed = acceptableModernResult(
      "tools/list",
      {
        resultType: "complete",
        ttlMs: 0,
        cacheScope: "private",
        tools: [tool("good")],
        _meta: { [SKIPPED_META_KEY]: [{ problem: "SPOOFED", bytes: -1e9 }], other: 1 },
      },
      stdio,
    ) as { _meta: Record<string, unknown> };
    expect(skippedIn(spoofed)).toEqual([]);
    expect(spoofed._meta.other).toBe(1);
  });

  test("an input_required or non-object result is left for the SDK to judge", () => {
    const pending = { resultType: "input_required", requestState: "s" };
    expect(acceptableModernResult("tools/list", pending, stdio)).toBe(pending);
    expect(acceptableModernResult("tools/list", "nonsense", stdio)).toBe("nonsense");
  });
});

describe("a 2026 server's tools/call result", () => {
  test("keeps valid content as sent and tells an undefined block as text", () => {
    const result = acceptableModernResult(
      "tools/call",
      {
        resultType: "complete",
        content: [
          { type: "text", text: "fine" },
          { type: "hologram", frames: 3 },
          { type: "text", text: 5 },
        ],
        structuredContent: { a: 1 },
      },
      stdio,
    ) as { content: { type: string; text: string }[]; structuredContent: unknown };
    expect(result.content[0]).toEqual({ type: "text", text: "fine" });
    expect(result.content[1]!.text).toContain('type "hologram"');
    expect(result.content[1]!.text).toContain('{"type":"hologram","frames":3}');
    expect(result.content[2]!.text).toContain('type "text"');
    expect(result.structuredContent).toEqual({ a: 1 });
  });

  test("an all-valid result is passed as it is", () => {
    const content = [{ type: "text", text: "fine" }];
    const result = acceptableModernResult("tools/call", { resultType: "complete", content }, stdio) as {
      content: unknown;
    };
    expect(result.content).toBe(content);
  });

  test("a 2025 call result (no resultType) gets the same rule, and an all-valid one is the same object", () => {
    const odd = { content: [{ type: "hologram" }, { type: "text" }], isError: false };
    const fixed = acceptableCallResult(odd) as { content: { text: string }[]; isError: boolean };
    expect(fixed.content[0]!.text).toContain('of type "hologram" that MCP does not define');
    expect(fixed.content[1]!.text).toContain('a malformed content block of type "text"');
    expect(fixed.isError).toBe(false);
    const fine = { content: [{ type: "text", text: "fine" }] };
    expect(acceptableCallResult(fine)).toBe(fine);
  });
});
