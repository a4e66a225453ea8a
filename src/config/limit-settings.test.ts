import { describe, expect, test } from "bun:test";
import { parseTestConfig, problemsOf } from "./config-test-support.ts";

const parse = (raw: unknown, env: Record<string, string> = {}) => parseTestConfig(raw, env);

const limitsOf = (config: ReturnType<typeof parse>, name: string) =>
  config.servers.find((server) => server.name === name)?.limits;

describe("call limit settings", () => {
  test("no limits by default: servers get no gate", () => {
    expect(limitsOf(parse({ mcpServers: { a: { command: "x" } } }), "a")).toBeUndefined();
  });

  test("a server's own limits, in object and short string forms, with the queue defaults", () => {
    const config = parse({
      mcpServers: {
        api: { command: "x", rateLimit: { perMinute: 60, burst: 10 } },
        slow: {
          command: "x",
          rateLimit: "10/s burst 20",
          maxConcurrent: 1,
          queueSize: 5,
          queueTimeoutMs: 1000,
        },
        hourly: { command: "x", rateLimit: "120/h" },
      },
    });
    expect(limitsOf(config, "api")).toEqual({
      rateLimit: { perMinute: 60, burst: 10 },
      queueSize: 100,
      queueTimeoutMs: 30_000,
    });
    expect(limitsOf(config, "slow")).toEqual({
      rateLimit: { perMinute: 600, burst: 20 },
      maxConcurrent: 1,
      queueSize: 5,
      queueTimeoutMs: 1000,
    });
    // Without a burst, one second's calls (at least one): evenly spaced.
    expect(limitsOf(config, "hourly")?.rateLimit).toEqual({ perMinute: 2, burst: 1 });
  });

  test("proxy-wide defaults apply to every server, and a server turns one off with false or 0", () => {
    const config = parse(
      {
        mcpproxy: { rateLimit: "30/min", queueTimeoutMs: 5000 },
        mcpServers: {
          plain: { command: "x" },
          free: { command: "x", rateLimit: false },
          own: { command: "x", maxConcurrent: 2, rateLimit: "off" },
        },
      },
      { MCPPROXY_MAX_CONCURRENT: "4" },
    );
    expect(limitsOf(config, "plain")).toEqual({
      rateLimit: { perMinute: 30, burst: 1 },
      maxConcurrent: 4,
      queueSize: 100,
      queueTimeoutMs: 5000,
    });
    expect(limitsOf(config, "free")).toEqual({ maxConcurrent: 4, queueSize: 100, queueTimeoutMs: 5000 });
    expect(limitsOf(config, "own")).toEqual({ maxConcurrent: 2, queueSize: 100, queueTimeoutMs: 5000 });
    const off = parse(
      { mcpServers: { a: { command: "x", maxConcurrent: 0 } } },
      { MCPPROXY_MAX_CONCURRENT: "3" },
    );
    expect(limitsOf(off, "a")).toBeUndefined();
  });

  test("every bad limit is reported with its path", () => {
    const problems = problemsOf(() =>
      parse(
        {
          mcpServers: {
            a: { command: "x", rateLimit: "fast", maxConcurrent: -1 },
            b: { command: "x", rateLimit: { perMinute: 0 } },
            c: { command: "x", rateLimit: { perMinute: 5, burts: 2 } },
            d: { command: "x", queueTimeoutMs: 1.5 },
          },
        },
        { MCPPROXY_RATE_LIMIT: "1000000000/s" },
      ),
    ).join("\n");
    expect(problems).toContain("mcpServers.a.rateLimit");
    expect(problems).toContain('"60/min"');
    expect(problems).toContain("mcpServers.a.maxConcurrent");
    expect(problems).toContain("mcpServers.b.rateLimit: the rate must be more than 0");
    expect(problems).toContain("mcpServers.c.rateLimit: has an unknown key burts");
    expect(problems).toContain("mcpServers.d.queueTimeoutMs");
    expect(problems).toContain("MCPPROXY_RATE_LIMIT");
  });
});
