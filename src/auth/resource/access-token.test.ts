import { afterAll, describe, expect, test } from "bun:test";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { HTTP_AUTH_DEFAULTS, type ResolvedHttpAuth } from "../../config/http-auth-config.ts";
import { createAccessTokens } from "./access-token.ts";

/** Tokens signed with a real key, checked against a real key set served on 127.0.0.1. */
const { publicKey, privateKey } = await generateKeyPair("ES256");
const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () => Response.json({ keys: [jwk] }),
});
afterAll(() => server.stop(true));

const issuer = "http://127.0.0.1/issuer";
const audience = "https://mcpproxy.test/mcp";
const settings: ResolvedHttpAuth = {
  ...HTTP_AUTH_DEFAULTS,
  issuer,
  audience,
  jwksUri: `http://127.0.0.1:${server.port}/keys`,
  jwksCacheSec: 600,
  jwksCooldownSec: 30,
  callsPerMinute: 0,
  access: [],
};
const tokens = createAccessTokens(settings);

const sign = (claims: Record<string, unknown>) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: "ES256", kid: "k1", typ: "at+jwt" })
    .setIssuer(issuer)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(privateKey);

describe("an access token's sub (RFC 7519 §4.1.2: a StringOrURI)", () => {
  test("a non-empty string is the principal's subject", async () => {
    const verdict = await tokens.verify(await sign({ sub: "alice" }));
    expect(verdict).toMatchObject({ ok: true, principal: { subject: "alice" } });
  });

  for (const [what, sub] of [
    ["an empty string", ""],
    ["a number", 42],
    ["an object", { id: "alice" }],
    ["an array", ["alice"]],
    ["true", true],
  ] as const) {
    test(`${what} is refused with 401 invalid_token naming the sub claim`, async () => {
      const verdict = await tokens.verify(await sign({ sub }));
      expect(verdict).toEqual({
        ok: false,
        status: 401,
        error: "invalid_token",
        description: "the token's sub claim is not accepted (it must be a non-empty string)",
      });
    });
  }

  test("two tokens with different object subs are not one principal: neither is admitted", async () => {
    const verdicts = await Promise.all([
      tokens.verify(await sign({ sub: { id: "alice" } })),
      tokens.verify(await sign({ sub: { id: "mallory" } })),
    ]);
    expect(verdicts.map((verdict) => verdict.ok)).toEqual([false, false]);
  });
});
