import { describe, expect, test } from "bun:test";
import { parseTestConfig, problemsOf } from "./config-test-support.ts";

const parse = (raw: unknown, env: Record<string, string> = {}) => parseTestConfig(raw, env);

const lazyOf = (config: ReturnType<typeof parse>) =>
  Object.fromEntries(config.servers.map((server) => [server.name, server.lazy === true]));

const servers = {
  plain: { command: "a" },
  eager: { command: "b", lazy: false },
  sleepy: { command: "c", lazy: true },
  wanted: { command: "d", lazy: true },
};

describe("lazy starts", () => {
  test("nothing is lazy by default but what says so itself", () => {
    expect(lazyOf(parse({ mcpServers: servers }))).toEqual({
      eager: false,
      plain: false,
      sleepy: true,
      wanted: true,
    });
  });

  test("mcpproxy.lazy is the default, a server's own lazy wins, preconnect wins over both", () => {
    const config = parse({ mcpServers: servers, mcpproxy: { lazy: true, preconnect: ["wanted", "plain"] } });
    expect(lazyOf(config)).toEqual({ eager: false, plain: false, sleepy: true, wanted: false });
    expect(config.preconnect).toEqual(["wanted", "plain"]);
    // Resolved to true or absent: an unchanged server compares equal across reloads.
    expect(config.servers.find((server) => server.name === "eager")).not.toHaveProperty("lazy");
  });

  test("MCPPROXY_LAZY sets the default from the environment", () => {
    expect(lazyOf(parse({ mcpServers: servers }, { MCPPROXY_LAZY: "1" })).plain).toBe(true);
    expect(
      lazyOf(parse({ mcpServers: servers, mcpproxy: { lazy: true } }, { MCPPROXY_LAZY: "0" })).plain,
    ).toBe(false);
  });

  test("a preconnect name that is no server is an error naming it and the closest server", () => {
    const problems = problemsOf(() =>
      parse({ mcpServers: servers, mcpproxy: { lazy: true, preconnect: ["sleepy", "wantd", "zzzzzzzz"] } }),
    );
    expect(problems).toEqual([
      'mcpproxy.preconnect.1: no server is named "wantd" (did you mean "wanted"?)',
      'mcpproxy.preconnect.2: no server is named "zzzzzzzz" (servers: plain, eager, sleepy, wanted)',
    ]);
  });

  test("preconnect must be a list of names", () => {
    expect(problemsOf(() => parse({ mcpServers: servers, mcpproxy: { preconnect: "plain" } }))).toEqual([
      'mcpproxy.preconnect: must be an array of server names (["github", …])',
    ]);
    expect(problemsOf(() => parse({ mcpServers: servers, mcpproxy: { Preconnect: [] } }))[0]).toContain(
      "did you mean `preconnect`",
    );
  });
});

describe("autoRetryFallback", () => {
  test("is off unless the file turns it on, proxy-wide or per server", () => {
    expect(parse({ mcpServers: servers }).autoRetryFallback).toBe(false);
    const config = parse({
      mcpServers: {
        on: { command: "a", autoRetryFallback: true },
        off: { command: "b", autoRetryFallback: false },
      },
      mcpproxy: { autoRetryFallback: true },
    });
    expect(config.autoRetryFallback).toBe(true);
    expect(config.servers.map((server) => [server.name, server.autoRetryFallback])).toEqual([
      ["off", false],
      ["on", true],
    ]);
  });

  test("has no environment variable, and must be true or false", () => {
    expect(parse({ mcpServers: servers }, { MCPPROXY_AUTO_RETRY_FALLBACK: "1" }).autoRetryFallback).toBe(
      false,
    );
    expect(problemsOf(() => parse({ mcpServers: servers, mcpproxy: { autoRetryFallback: "yes" } }))).toEqual([
      "mcpproxy.autoRetryFallback: must be true or false",
    ]);
    expect(problemsOf(() => parse({ mcpServers: { s: { command: "a", autoRetryFallback: 1 } } }))).toEqual([
      "mcpServers.s.autoRetryFallback: must be true or false",
    ]);
  });
});
