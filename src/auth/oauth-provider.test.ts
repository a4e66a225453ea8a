import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { HttpServerConfig } from "../config/parse-server.ts";
import { createOAuthProvider, isLoginNeeded } from "./oauth-provider.ts";
import { openOAuthStore } from "./oauth-store.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const URL_ = "https://mcp.example.test/mcp";
const AS1 = { issuer: "https://as1.example.test" };
const AS2 = { issuer: "https://as2.example.test" };

function setup(oauth?: HttpServerConfig["oauth"]) {
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-oauth-"));
  dirs.push(dir);
  const server: HttpServerConfig = {
    name: "remote",
    enabled: true,
    timeoutMs: 1000,
    transport: "streamable-http",
    url: URL_,
    headers: {},
    ...(oauth !== undefined ? { oauth } : {}),
  } as HttpServerConfig;
  const store = openOAuthStore(dir, server.name, server.url);
  const provider = (mode: "login" | "serve") =>
    createOAuthProvider({ server, store, mode, redirectUrl: "http://127.0.0.1:40000/callback" });
  return { dir, server, store, provider };
}

describe("credentials keyed by the authorization server's issuer", () => {
  test("a registration and tokens saved for one issuer are not given for another, and the stamp is kept as given", async () => {
    const { store, provider } = setup();
    const login = provider("login");
    login.saveClientInformation?.(
      { client_id: "c1", redirect_uris: ["http://127.0.0.1:40000/callback"], issuer: AS1.issuer },
      AS1,
    );
    await login.saveTokens({ access_token: "t1", token_type: "Bearer", issuer: AS1.issuer }, AS1);
    expect(await login.clientInformation(AS1)).toMatchObject({ client_id: "c1", issuer: AS1.issuer });
    expect(await login.clientInformation(AS2)).toBeUndefined();
    expect(await login.tokens(AS2)).toBeUndefined();
    expect(await login.tokens()).toMatchObject({ access_token: "t1", issuer: AS1.issuer });
    expect(store.load().current).toBe(AS1.issuer);
  });

  test("serving never registers: no registration for the issuer is a login needed", async () => {
    const { provider } = setup();
    let thrown: unknown;
    try {
      await provider("serve").clientInformation(AS1);
    } catch (error) {
      thrown = error;
    }
    expect(isLoginNeeded(thrown)).toBe(true);
  });

  test("a client registered by hand is bound to the first issuer it is used with and refused for another", async () => {
    const { store, provider } = setup({ clientId: "by-hand", clientSecret: "s3cret" });
    const login = provider("login");
    expect(await login.clientInformation(AS1)).toEqual({
      client_id: "by-hand",
      client_secret: "s3cret",
      issuer: AS1.issuer,
    });
    // The binding is kept; the secret stays in the config.
    expect(JSON.stringify(store.load())).not.toContain("s3cret");
    expect(await login.clientInformation(AS1)).toMatchObject({
      client_id: "by-hand",
      client_secret: "s3cret",
    });
    expect(() => login.clientInformation(AS2)).toThrow(/does not send it to another authorization server/);
  });

  test("a registration made for another redirect port is not offered to a login on this one", async () => {
    const { provider } = setup();
    const login = provider("login");
    login.saveClientInformation?.(
      { client_id: "old", redirect_uris: ["http://127.0.0.1:39999/callback"] },
      AS1,
    );
    expect(await login.clientInformation(AS1)).toBeUndefined();
  });

  test("a refresh in serve does not overwrite tokens a login saved meanwhile", async () => {
    const { store, provider } = setup();
    const serve = provider("serve");
    const login = provider("login");
    await login.saveTokens({ access_token: "old", token_type: "Bearer" }, AS1);
    expect(await serve.tokens(AS1)).toMatchObject({ access_token: "old" }); // the SDK reads, then refreshes
    await login.saveTokens({ access_token: "from-login", token_type: "Bearer" }, AS1);
    await serve.saveTokens({ access_token: "refreshed-old", token_type: "Bearer" }, AS1);
    expect(store.load().issuers[AS1.issuer]?.tokens?.access_token).toBe("from-login");
  });

  test("a login does not use stored tokens until it saved its own", async () => {
    const { provider } = setup();
    await provider("serve").saveTokens({ access_token: "stored", token_type: "Bearer" }, AS1);
    const login = provider("login");
    expect(await login.tokens()).toBeUndefined();
    await login.saveTokens({ access_token: "new", token_type: "Bearer" }, AS1);
    expect(await login.tokens()).toMatchObject({ access_token: "new" });
  });
});

describe("the token file", () => {
  test("a file from before issuer keying is filed under the issuer its metadata names; without one it is not used", () => {
    const { dir, server, store } = setup();
    mkdirSync(dirname(store.path), { recursive: true });
    const legacy = (discoveryState?: unknown) =>
      writeFileSync(
        store.path,
        JSON.stringify({
          serverUrl: server.url,
          clientInformation: { client_id: "c" },
          tokens: { access_token: "t", token_type: "Bearer" },
          ...(discoveryState ? { discoveryState } : {}),
        }),
      );
    legacy({ authorizationServerUrl: "https://as1.example.test/", authorizationServerMetadata: AS1 });
    const upgraded = store.load();
    expect(upgraded.current).toBe(AS1.issuer);
    expect(upgraded.issuers[AS1.issuer]?.tokens?.access_token).toBe("t");
    legacy();
    expect(store.load().issuers).toEqual({});
    expect(openOAuthStore(dir, server.name, "https://elsewhere.example.test/mcp").load().issuers).toEqual({});
  });
});
