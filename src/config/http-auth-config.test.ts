import { describe, expect, test } from "bun:test";
import { parseTestConfig, problemsOf } from "./config-test-support.ts";

const ISSUER = "https://login.example.com/tenant";

describe("mcpproxy.httpAuth", () => {
  test("is off unless an issuer is set", () => {
    expect(parseTestConfig({ mcpServers: {} }).httpAuth).toBeUndefined();
  });

  test("takes the file's settings with their defaults, and the environment over the file", () => {
    const config = parseTestConfig(
      { mcpServers: {}, mcpproxy: { httpAuth: { issuer: ISSUER, audience: "api://mcpproxy" } } },
      { MCPPROXY_HTTP_AUTH_SCOPES: "mcp:tools, mcp:read", MCPPROXY_HTTP_AUTH_CALLS_PER_MINUTE: "60" },
    );
    expect(config.httpAuth).toMatchObject({
      issuer: ISSUER,
      audience: "api://mcpproxy",
      requiredScopes: ["mcp:tools", "mcp:read"],
      callsPerMinute: 60,
      clockToleranceSec: 30,
      jwksCacheSec: 600,
      jwksCooldownSec: 30,
      access: [],
    });
    expect(config.httpAuth?.algorithms).not.toContain("HS256");
    const fromEnv = parseTestConfig(
      { mcpServers: {} },
      { MCPPROXY_HTTP_AUTH_ISSUER: ISSUER, MCPPROXY_HTTP_AUTH_AUDIENCE: "aud" },
    );
    expect(fromEnv.httpAuth?.issuer).toBe(ISSUER);
  });

  test("names every mistake: no audience, an issuer in clear, a shared-secret algorithm, a profile that does not exist, a misspelt key", () => {
    const problems = problemsOf(() =>
      parseTestConfig({
        mcpServers: {},
        mcpproxy: {
          profiles: { dev: { servers: ["a"] } },
          httpAuth: {
            issuer: "http://login.example.com",
            algorithms: ["RS256", "HS256"],
            requiredScope: ["x"],
            access: [{ match: { sub: "alice" }, profile: "ops" }, { profil: "dev" }, "everyone"],
          },
        },
      }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining("mcpproxy.httpAuth.issuer: must be an https:// URL"),
        expect.stringContaining("mcpproxy.httpAuth.algorithms: may hold only"),
        expect.stringContaining(
          "mcpproxy.httpAuth.requiredScope: unknown key (did you mean `requiredScopes`?)",
        ),
        expect.stringContaining(
          "mcpproxy.httpAuth.access.0.profile: names no profile of mcpproxy.profiles (dev)",
        ),
        expect.stringContaining("mcpproxy.httpAuth.access.1.profil: unknown key (did you mean `profile`?)"),
        expect.stringContaining("mcpproxy.httpAuth.access.2: must be an object"),
      ]),
    );
    const noAudience = problemsOf(() =>
      parseTestConfig({ mcpServers: {}, mcpproxy: { httpAuth: { issuer: ISSUER } } }),
    );
    expect(noAudience).toEqual([
      expect.stringContaining("mcpproxy.httpAuth.audience: is needed with issuer"),
    ]);
  });

  test("settings without an issuer are a mistake, not ignored", () => {
    expect(
      problemsOf(() => parseTestConfig({ mcpServers: {}, mcpproxy: { httpAuth: { audience: "aud" } } })),
    ).toEqual([expect.stringContaining("mcpproxy.httpAuth.issuer: is needed: audience take effect with it")]);
  });

  test("takes http:// issuers on this machine only", () => {
    const local = parseTestConfig({
      mcpServers: {},
      mcpproxy: { httpAuth: { issuer: "http://127.0.0.1:8080", audience: "aud" } },
    });
    expect(local.httpAuth?.issuer).toBe("http://127.0.0.1:8080");
  });
});
