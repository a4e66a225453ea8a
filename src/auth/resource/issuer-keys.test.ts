import { afterAll, describe, expect, test } from "bun:test";
import { createIssuerKeys, IssuerUnavailable, metadataUrls } from "./issuer-keys.ts";

describe("issuer metadata", () => {
  test("puts RFC 8414's well-known part before the issuer's path, OpenID's after", () => {
    expect(metadataUrls("https://login.example.com/tenant/")).toEqual([
      "https://login.example.com/.well-known/oauth-authorization-server/tenant",
      "https://login.example.com/tenant/.well-known/openid-configuration",
    ]);
    expect(metadataUrls("https://login.example.com")).toEqual([
      "https://login.example.com/.well-known/oauth-authorization-server",
      "https://login.example.com/.well-known/openid-configuration",
    ]);
  });

  const asked: string[] = [];
  let named = "";
  let port = 0;
  const server: ReturnType<typeof Bun.serve> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request): Response {
      const { pathname } = new URL(request.url);
      asked.push(pathname);
      // Only OpenID discovery is there, and it names whatever issuer the test set.
      if (pathname === "/.well-known/openid-configuration")
        return Response.json({ issuer: named, jwks_uri: `http://127.0.0.1:${port}/keys` });
      return new Response("no", { status: 404 });
    },
  });
  port = server.port ?? 0;
  afterAll(() => server.stop(true));
  const issuer = `http://127.0.0.1:${port}`;
  const header = { alg: "RS256", kid: "k" };

  test("refuses metadata that names another issuer, and asks the issuer again only after retrySec", async () => {
    named = "https://evil.example";
    let now = 0;
    const keys = createIssuerKeys({ issuer, cacheSec: 60, cooldownSec: 30, retrySec: 2, now: () => now });
    const first = await Promise.resolve(keys.getKey(header, {} as never)).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(IssuerUnavailable);
    expect((first as Error).message).toContain('names the issuer "https://evil.example"');
    const count = asked.length;
    await expect(Promise.resolve(keys.getKey(header, {} as never))).rejects.toBeInstanceOf(IssuerUnavailable);
    expect(asked.length).toBe(count);
    now = 2_500;
    named = issuer;
    // The key set itself is missing (404): still unavailable, but the discovery went through.
    await expect(Promise.resolve(keys.getKey(header, {} as never))).rejects.toBeInstanceOf(IssuerUnavailable);
    expect(keys.jwksUri()).toBe(`${issuer}/keys`);
  });
});
