import { describe, expect, test } from "bun:test";
import { isProxyError } from "../errors.ts";
import { problemsOf } from "./config-test-support.ts";
import { parseConfig } from "./load-config.ts";

const parse = (raw: unknown, env: Record<string, string> = {}, overrides = {}) =>
  parseConfig(raw, { configPath: "/cfg.json", env: { HOME: "/home/u", ...env }, cwd: "/work", overrides });

describe("parseConfig", () => {
  test("reads stdio, streamable HTTP and SSE servers in the mcpServers format", () => {
    const config = parse({
      mcpServers: {
        local: { command: "npx", args: ["-y", "pkg"], env: { A: "1" }, cwd: "/tmp" },
        remote: { url: "https://example.com/mcp", headers: { Authorization: "Bearer x" } },
        legacy: { url: "http://127.0.0.1:9000/sse" },
        forcedSse: { url: "http://127.0.0.1:9000/events", transport: "sse" },
        off: { command: "x", enabled: false },
        clineOff: { command: "x", disabled: true },
      },
    });
    const byName = Object.fromEntries(config.servers.map((s) => [s.name, s]));
    expect(byName.local).toMatchObject({
      transport: "stdio",
      command: "npx",
      args: ["-y", "pkg"],
      env: { A: "1" },
      cwd: "/tmp",
      enabled: true,
      timeoutMs: 30000,
    });
    expect(byName.remote).toMatchObject({
      transport: "streamable-http",
      headers: { Authorization: "Bearer x" },
    });
    expect(byName.legacy?.transport).toBe("sse");
    expect(byName.forcedSse?.transport).toBe("sse");
    expect(byName.off?.enabled).toBe(false);
    expect(byName.clineOff?.enabled).toBe(false);
    expect(Object.isFrozen(config)).toBe(true);
  });

  test("expands ${VAR} and ${VAR:-default} in server strings", () => {
    const config = parse(
      {
        mcpServers: {
          s: { url: "https://${HOST:-api.example.com}/mcp", headers: { Authorization: "Bearer ${TOKEN}" } },
        },
      },
      { TOKEN: "t0k" },
    );
    expect(config.servers[0]).toMatchObject({
      url: "https://api.example.com/mcp",
      headers: { Authorization: "Bearer t0k" },
    });
  });

  test("a missing variable fails that server alone, naming the field, the variable and where to set it", () => {
    const config = parse({
      mcpServers: {
        gh: { command: "x", env: { T: "${GH_TOKEN}" } },
        ok: { command: "y" },
        off: { command: "x", env: { T: "${GH_TOKEN}" }, enabled: false },
        web: { url: "${BASE_URL}/mcp", headers: { Authorization: "Bearer ${WEB_TOKEN}" } },
      },
    });
    const byName = Object.fromEntries(config.servers.map((s) => [s.name, s]));
    expect(byName.ok?.configProblem).toBeUndefined();
    expect(byName.off?.configProblem).toBeUndefined();
    expect(byName.gh?.configProblem).toBe(
      'mcpServers.gh.env.T — environment variable GH_TOKEN is not set: set it where mcpproxy starts (export it in your shell, or add it to the "env" of mcpproxy\'s entry in the MCP client that launches it), write the value in place of ${GH_TOKEN}, or give a default: ${GH_TOKEN:-…}',
    );
    // Its shape cannot be checked without the variable (a URL): it still fails alone, naming both.
    expect(byName.web?.configProblem).toContain(
      "mcpServers.web.url — environment variable BASE_URL is not set",
    );
    expect(byName.web?.configProblem).toContain(
      "mcpServers.web.headers.Authorization — environment variable WEB_TOKEN is not set",
    );
  });

  test("a server lacking a variable still has its other mistakes reported", () => {
    expect(
      problemsOf(() => parse({ mcpServers: { gh: { command: "x", args: "a", env: { T: "${GH_TOKEN}" } } } })),
    ).toEqual(["mcpServers.gh.args: must be an array of strings"]);
  });

  test("an agent's entry never reads the person's variables, and lacks none", () => {
    const entry = { command: "x", env: { T: "${SECRET}" }, agent: { change: "added", at: "" } };
    const [server] = parse({ mcpServers: { a: entry } }, { SECRET: "s3cret" }).servers;
    expect(server).toMatchObject({ awaitingApproval: "launch", env: { T: "0" } });
    expect(server?.configProblem).toBeUndefined();
  });

  test("settings come from flag, then environment, then file, then default", () => {
    const file = { mcpServers: {}, mcpproxy: { topK: 7, port: 9000, transport: "sse" } };
    expect(parse(file)).toMatchObject({
      topK: 7,
      port: 9000,
      transport: "sse",
      host: "127.0.0.1",
      toolNameLimit: 60,
    });
    expect(parse(file, { MCPPROXY_TOP_K: "9", MCPPROXY_TRANSPORT: "Streamable-HTTP" })).toMatchObject({
      topK: 9,
      transport: "http",
    });
    expect(parse(file, { MCPPROXY_PORT: "9100" }, { port: { value: "9200", flag: "--port" } }).port).toBe(
      9200,
    );
    expect(parse(file, { MCPPROXY_RESET_DATA: "1", MCPPROXY_LOG_LEVEL: "DEBUG" })).toMatchObject({
      resetData: true,
      logLevel: "debug",
    });
    expect(parse(file).dataDir).toBe("/home/u/.mcpproxy");
    expect(parse(file, { MCPPROXY_DATA_DIR: "rel/data" }).dataDir).toBe("/work/rel/data");
  });

  test("lists every problem at once, each with where it came from", () => {
    const problems = problemsOf(() =>
      parse(
        {
          mcpServers: { both: { command: "x", url: "http://a" }, bad: { command: "" } },
          mcpproxy: { toolNameLimit: 5 },
        },
        { MCPPROXY_TOP_K: "0", MCPPROXY_TRANSPORT: "carrier-pigeon" },
        { port: { value: "-1", flag: "--port" } },
      ),
    );
    expect(problems).toEqual([
      "MCPPROXY_TOP_K: must be a whole number from 1 to 50",
      "mcpproxy.toolNameLimit: must be a whole number from 10 to 200",
      'MCPPROXY_TRANSPORT: must be "stdio", "streamable-http" (or "http") or "sse"',
      "--port: must be a whole number from 0 to 65535",
      "mcpServers.both: has both command and url; keep command for stdio or url for HTTP/SSE",
      "mcpServers.bad.command: must not be empty",
    ]);
  });

  test("large-result settings: defaults, file and environment, and a bad or misspelt one named", () => {
    const defaults = parse({ mcpServers: {} });
    expect([defaults.resultSpillBytes, defaults.resultHeadChars, defaults.resultPageChars]).toEqual([
      65_536, 4_096, 32_768,
    ]);
    expect([defaults.resultTtlMs, defaults.resultsPerSession]).toEqual([1_800_000, 20]);
    expect([defaults.resultSessionBytes, defaults.resultStoreBytes]).toEqual([
      64 * 1024 ** 2,
      256 * 1024 ** 2,
    ]);
    const set = parse(
      { mcpServers: {}, mcpproxy: { resultSpillBytes: 0 } },
      { MCPPROXY_RESULT_TTL_MS: "5000" },
    );
    expect([set.resultSpillBytes, set.resultTtlMs]).toEqual([0, 5_000]);
    expect(
      problemsOf(() =>
        parse({ mcpServers: {}, mcpproxy: { resultSpillByte: 1 } }, { MCPPROXY_RESULTS_PER_SESSION: "0" }),
      ),
    ).toEqual([
      "mcpproxy.resultSpillByte: unknown key (did you mean `resultSpillBytes`?)",
      "MCPPROXY_RESULTS_PER_SESSION: must be a whole number from 1 to 10000",
    ]);
  });

  test("all routing and alwaysLoad: from the file, the environment and the flag; a bad value named", () => {
    const defaults = parse({ mcpServers: {} });
    expect([defaults.routing, defaults.alwaysLoad]).toEqual(["call-tool", 10]);
    expect(parse({ mcpServers: {}, mcpproxy: { routing: "all", alwaysLoad: 0 } })).toMatchObject({
      routing: "all",
      alwaysLoad: 0,
    });
    expect(
      parse({ mcpServers: {} }, { MCPPROXY_ROUTING_TYPE: "ALL", MCPPROXY_ALWAYS_LOAD: "25" }),
    ).toMatchObject({ routing: "all", alwaysLoad: 25 });
    expect(parse({ mcpServers: {} }, {}, { routing: { value: "all", flag: "--routing" } }).routing).toBe(
      "all",
    );
    expect(
      problemsOf(() =>
        parse(
          { mcpServers: {}, mcpproxy: { routing: "every", alwaysLoads: 3 } },
          { MCPPROXY_ALWAYS_LOAD: "-1" },
        ),
      ),
    ).toEqual([
      "mcpproxy.alwaysLoads: unknown key (did you mean `alwaysLoad`?)",
      'mcpproxy.routing: must be "call-tool", "dynamic", "auto" or "all"',
      "MCPPROXY_ALWAYS_LOAD: must be a whole number from 0 to 1000",
    ]);
  });

  test("rejects a top level that is not an object of servers", () => {
    expect(problemsOf(() => parse([]))[0]).toContain("must be a JSON object");
    expect(problemsOf(() => parse({ mcpServers: [] }))[0]).toContain(
      "mcpServers: must be an object of servers",
    );
  });

  test("an unknown key at any level is a problem that names the closest known key", () => {
    expect(problemsOf(() => parse({ mcpServer: { x: { command: "x" } } }))).toEqual([
      "mcpServer: unknown key (did you mean `mcpServers`?)",
    ]);
    expect(problemsOf(() => parse({ mcpServers: { x: { command: "x", arg: ["-y"] } } }))).toEqual([
      "mcpServers.x.arg: unknown key (did you mean `args`?)",
    ]);
    expect(problemsOf(() => parse({ mcpServers: {}, mcpproxy: { topk: 3, colour: "blue" } }))).toEqual([
      "mcpproxy.topk: unknown key (did you mean `topK`?)",
      expect.stringMatching(/^mcpproxy\.colour: unknown key \(known: topK, /),
    ]);
  });

  test("keys other clients write and we leave alone pass: VS Code inputs, Cline's autoApprove and timeout", () => {
    const config = parse({
      $schema: "https://example.com/schema.json",
      inputs: [{ id: "token", type: "promptString" }],
      mcpServers: {
        x: { command: "x", autoApprove: ["a"], alwaysAllow: [], timeout: 60, transportType: "stdio" },
      },
    });
    expect(config.servers).toHaveLength(1);
  });

  test("reads VS Code's servers map and Windsurf's serverUrl; a VS Code input variable fails its server", () => {
    const config = parse({
      servers: {
        fs: { type: "stdio", command: "npx", args: ["fs"] },
        web: { type: "http", url: "https://example.com/mcp" },
      },
      mcpServers: { wind: { serverUrl: "https://example.com/wind/mcp" } },
    });
    expect(config.servers.map((s) => [s.name, s.transport])).toEqual([
      ["fs", "stdio"],
      ["web", "streamable-http"],
      ["wind", "streamable-http"],
    ]);
    expect(
      parse({ servers: { gh: { command: "x", env: { T: "${input:token}" } } } }).servers[0]?.configProblem,
    ).toBe(
      'servers.gh.env.T — VS Code input variables (${input:…}) are not supported: put the value of "token" in an environment variable and write ${NAME} (`mcpproxy import` does this), or write the value itself',
    );
    expect(
      problemsOf(() => parse({ mcpServers: { a: { command: "x" } }, servers: { a: { command: "y" } } })),
    ).toEqual(["servers.a: a server of this name is already configured"]);
  });

  test("~ in dataDir, logFile and a server's cwd is the home directory; a relative cwd is the config's", () => {
    const config = parse(
      {
        mcpServers: { a: { command: "x", cwd: "~/work" }, b: { command: "x", cwd: "sub" } },
        mcpproxy: { dataDir: "~/x" },
      },
      { MCPPROXY_LOG_FILE: "~/logs/p.log" },
    );
    expect(config.dataDir).toBe("/home/u/x");
    expect(config.logFile).toBe("/home/u/logs/p.log");
    expect(config.servers.map((s) => (s.transport === "stdio" ? s.cwd : ""))).toEqual([
      "/home/u/work",
      "/sub",
    ]);
  });

  test("an error names its real source: a flag, the environment, or the file", () => {
    const message = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        if (isProxyError(error)) return `${error.code}: ${error.message}`;
      }
      return "";
    };
    expect(message(() => parse({}, {}, { port: { value: "x", flag: "--port" } }))).toBe(
      "USAGE: 1 problem in the command line; fix it and run again.",
    );
    expect(message(() => parse({}, { MCPPROXY_PORT: "x" }))).toBe(
      "CONFIG_INVALID: 1 problem in the environment; fix it and run again.",
    );
    expect(message(() => parse({ mcpproxy: { port: "x" } }, { MCPPROXY_TOP_K: "0" }))).toBe(
      "CONFIG_INVALID: 2 problems in the environment and the config file /cfg.json; fix them and run again.",
    );
  });
});
