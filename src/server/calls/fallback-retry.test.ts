import { describe, expect, test } from "bun:test";
import type { ServerConfig } from "../../config/parse-server.ts";
import { FALLBACK_META_KEY, fallbackPolicy, fallbackResult } from "./fallback-retry.ts";

type Extra = Pick<ServerConfig, "autoRetryFallback" | "writtenByAgent" | "validateArguments">;
const server = (name: string, extra: Extra = {}): ServerConfig => ({
  name,
  enabled: true,
  timeoutMs: 1_000,
  transport: "stdio",
  command: "x",
  args: [],
  env: {},
  ...extra,
});

describe("fallbackPolicy", () => {
  const servers = [
    server("mine"),
    server("optedIn", { autoRetryFallback: true }),
    server("optedOut", { autoRetryFallback: false }),
    server("agents", { writtenByAgent: true }),
    server("agentsOptedIn", { writtenByAgent: true, autoRetryFallback: true }),
    server("sloppy", { validateArguments: false }),
  ];

  test("off by default: only a server's own true turns it on", () => {
    const policy = fallbackPolicy(() => servers, false);
    expect(servers.map((s) => policy.isOn(s.name))).toEqual([false, true, false, false, true, false]);
  });

  test("the proxy-wide default reaches the servers a person wrote, not those an agent wrote", () => {
    const policy = fallbackPolicy(() => servers, true);
    expect(servers.map((s) => policy.isOn(s.name))).toEqual([true, true, false, false, true, true]);
    expect(policy.isOn("unknown")).toBe(false);
  });

  test("reads the servers as they are now", () => {
    let current = [server("mine")];
    const policy = fallbackPolicy(() => current, false);
    expect(policy.isOn("mine")).toBe(false);
    current = [server("mine", { autoRetryFallback: true })];
    expect(policy.isOn("mine")).toBe(true);
  });

  test("tells the servers whose arguments are not checked", () => {
    const policy = fallbackPolicy(() => servers, true);
    expect(policy.checksArguments("mine")).toBe(true);
    expect(policy.checksArguments("sloppy")).toBe(false);
  });
});

describe("fallbackResult", () => {
  test("keeps the original error and the fallback's result, each labelled, in that order", () => {
    const result = fallbackResult(
      { from: "a__read", to: "b__read", originalError: "a is down" },
      { content: [{ type: "text", text: "a is down" }], isError: true },
      {
        content: [{ type: "text", text: "the file" }],
        structuredContent: { text: "the file" },
        _meta: { "b/trace": 1 },
      },
    );
    const texts = (result.content ?? []).map((part) => ("text" in part ? part.text : ""));
    expect(texts[0]).toContain("a__read failed");
    expect(texts[1]).toBe("a is down");
    expect(texts[2]).toBe("[mcpproxy] Result of b__read, called in place of a__read:");
    expect(texts[3]).toBe("the file");
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ text: "the file" });
    expect(result._meta).toEqual({
      "b/trace": 1,
      [FALLBACK_META_KEY]: { from: "a__read", to: "b__read", originalError: "a is down" },
    });
  });

  test("says when the fallback failed too", () => {
    const result = fallbackResult(
      { from: "a__read", to: "b__read" },
      { content: [{ type: "text", text: "a is down" }], isError: true },
      { content: [{ type: "text", text: "b is down" }], isError: true },
    );
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("(it failed too)");
  });
});
