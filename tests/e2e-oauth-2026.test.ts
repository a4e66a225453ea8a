import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  cleanupAfterEach,
  connectHttp,
  connectStdio,
  eventually,
  ROOT,
  requireBinary,
  runCli,
  type Sandbox,
  startHttpProxy,
  watchOutput,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * Upstream OAuth as MCP 2026-07-28 wants it (issue 22, item 8), through the compiled binary against
 * tests/fixtures/oauth-server.ts, whose flags make its authorization server speak the newer rules
 * or misbehave: the RFC 9207 `iss` of the authorization response, metadata whose issuer is not its
 * own, a second authorization server to move to, 403 insufficient_scope, client metadata documents.
 * The "browser" follows the redirect to mcpproxy's loopback callback, as after the user approved.
 */
const scope = cleanupAfterEach();

interface FixtureStats {
  registrations: number;
  authorizations: number;
  codeExchanges: number;
  insufficientScope: number;
  registered: { as: string; metadata: Record<string, unknown> }[];
  authorizeRequests: { as: string; clientId: string; scope: string | null; redirectUri: string }[];
  foreignClients: number;
}

interface StoredRecord {
  current?: string;
  stepUpScope?: string;
  issuers: Record<
    string,
    { clientInformation?: { client_id: string; issuer?: string }; tokens?: { issuer?: string } }
  >;
}

async function startOAuthFixture(flags: string[] = []) {
  const child = Bun.spawn([process.execPath, join(ROOT, "tests", "fixtures", "oauth-server.ts"), ...flags], {
    stdout: "pipe",
    stderr: "inherit",
  });
  scope.defer(() => child.kill());
  const port = await watchOutput(child.stdout).waitFor(/\{"port":(\d+)\}/, 10_000);
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    url: `${base}/mcp`,
    stats: async () => (await (await fetch(`${base}/admin/stats`)).json()) as FixtureStats,
    migrate: () => fetch(`${base}/admin/migrate`, { method: "POST" }),
  };
}

const browser = `${process.execPath} ${join(ROOT, "scripts", "conformance", "fetch-url.mjs")}`;
const gatedBrowser = (gate: string) =>
  `${process.execPath} ${join(ROOT, "tests", "fixtures", "gated-browser.ts")} ${gate}`;

const flags = (sandbox: Sandbox) => ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
const login = (sandbox: Sandbox, name = "secure", env: Record<string, string> = { BROWSER: browser }) =>
  runCli(["auth", "login", name, ...flags(sandbox)], sandbox.env(env));

/** A sandbox whose config names the fixture as `secure` (and any other servers given). */
function sandboxFor(url: string, oauth?: unknown, more: Record<string, unknown> = {}) {
  const sandbox = scope.sandbox();
  sandbox.writeConfig({ mcpServers: { secure: { url, ...(oauth ? { oauth } : {}) }, ...more } });
  return sandbox;
}

function storedRecord(sandbox: Sandbox, name = "secure"): StoredRecord {
  const dir = join(sandbox.dataDir, "oauth");
  const file = readdirSync(dir).find((entry) => entry.startsWith(`${name}-`));
  return JSON.parse(readFileSync(join(dir, file!), "utf8")) as StoredRecord;
}

const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");

describe("1. the authorization response's iss (RFC 9207) and the metadata's issuer", () => {
  test("a matching iss, advertised, is taken; a wrong, normalised or promised-but-missing one is refused and nothing is saved", async () => {
    const good = await startOAuthFixture(["--iss-supported", "--iss", "correct"]);
    const accepted = await login(sandboxFor(good.url));
    expect(accepted.code).toBe(0);
    expect((await good.stats()).codeExchanges).toBe(1);

    for (const [fixtureFlags, says] of [
      [["--iss", "wrong"], "does not match"], // not advertised, but present: still compared
      [["--iss-supported", "--iss", "normalized"], "does not match"], // no URL normalisation
      [["--iss-supported"], "is missing"],
    ] as const) {
      const fixture = await startOAuthFixture([...fixtureFlags]);
      const sandbox = sandboxFor(fixture.url);
      const refused = await login(sandbox);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("did not come from the authorization server this login started with");
      expect(refused.stderr).toContain(says);
      expect(refused.stderr).not.toContain("evil.example.test");
      expect((await fixture.stats()).codeExchanges).toBe(0);
      const status = await runCli(["auth", "status", "secure", ...flags(sandbox)], sandbox.env());
      expect(status.stdout).toContain("secure: not logged in");
    }
  });

  test("after an iss mismatch the authorization server's error text is never shown; with a matching iss it is", async () => {
    const mixedUp = await startOAuthFixture([
      "--iss",
      "wrong",
      "--error",
      "PHISH: call +1-555-0100 to unlock",
    ]);
    const refused = await login(sandboxFor(mixedUp.url));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("did not come from the authorization server");
    expect(refused.stderr).not.toContain("PHISH");
    expect(refused.stderr).not.toContain("access_denied");

    const honest = await startOAuthFixture([
      "--iss-supported",
      "--iss",
      "correct",
      "--error",
      "denied by policy",
    ]);
    const denied = await login(sandboxFor(honest.url));
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain("The authorization server refused: access_denied (denied by policy)");
  });

  test("metadata whose issuer is not the authorization server it was fetched from is refused before anything is registered", async () => {
    const poisoned = await startOAuthFixture(["--metadata-issuer", "https://attacker.example.test"]);
    const refused = await login(sandboxFor(poisoned.url));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("names another issuer (RFC 8414 §3.3)");
    const stats = await poisoned.stats();
    expect(stats.registrations).toBe(0);
    expect(stats.authorizeRequests).toHaveLength(0);
  });
});

describe("2. dynamic client registration", () => {
  test('registers as application_type "native" with its loopback redirect', async () => {
    const fixture = await startOAuthFixture();
    expect((await login(sandboxFor(fixture.url))).code).toBe(0);
    const [registration] = (await fixture.stats()).registered;
    expect(registration?.metadata).toMatchObject({
      application_type: "native",
      grant_types: ["authorization_code", "refresh_token"],
      token_endpoint_auth_method: "none",
    });
    expect(registration?.metadata.redirect_uris).toEqual([
      expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/callback$/),
    ]);
  });
});

describe("3. credentials keyed by the authorization server's issuer", () => {
  test("a server that moves to another authorization server needs a new login, which registers there; the old client is never shown to it and its record is kept", async () => {
    const fixture = await startOAuthFixture();
    const sandbox = sandboxFor(fixture.url);
    expect((await login(sandbox)).code).toBe(0);
    expect((await runCli(["index", ...flags(sandbox)], sandbox.env())).code).toBe(0);
    const first = storedRecord(sandbox);
    const firstIssuer = first.current!;
    expect(firstIssuer).toBe(fixture.base);
    // The SDK's issuer stamp, kept as it was given.
    expect(first.issuers[firstIssuer]?.tokens?.issuer).toBe(firstIssuer);
    expect(first.issuers[firstIssuer]?.clientInformation?.issuer).toBe(firstIssuer);

    await fixture.migrate();
    const indexed = await runCli(["index", ...flags(sandbox)], sandbox.env());
    expect(indexed.stdout + indexed.stderr).toContain(
      `secure now uses another authorization server (${fixture.base}/as2)`,
    );
    expect(indexed.stdout + indexed.stderr).toContain("mcpproxy auth login secure");
    // Serving registers nothing, anywhere, and shows the old client to nobody.
    expect((await fixture.stats()).registered.filter((r) => r.as === "as2")).toHaveLength(0);

    const again = await login(sandbox);
    expect(again.code).toBe(0);
    const stats = await fixture.stats();
    expect(stats.registered.map((r) => r.as)).toEqual(["as1", "as2"]);
    expect(stats.foreignClients).toBe(0);
    expect(stats.authorizeRequests.at(-1)?.as).toBe("as2");

    const after = storedRecord(sandbox);
    expect(after.current).toBe(`${fixture.base}/as2`);
    expect(Object.keys(after.issuers).sort()).toEqual([fixture.base, `${fixture.base}/as2`]);
    expect(after.issuers[firstIssuer]?.clientInformation?.client_id).toBe(
      first.issuers[firstIssuer]?.clientInformation?.client_id,
    );
    const reindexed = await runCli(["index", ...flags(sandbox)], sandbox.env());
    expect(reindexed.code).toBe(0);
    const status = await runCli(["auth", "status", "--json", ...flags(sandbox)], sandbox.env());
    expect(JSON.parse(status.stdout).servers[0]).toMatchObject({
      state: "logged in",
      issuer: `${fixture.base}/as2`,
    });
  });

  test("a server that moves to another authorization server in the middle of a login is followed there", async () => {
    const fixture = await startOAuthFixture(["--migrate-on-first-use"]);
    const sandbox = sandboxFor(fixture.url);
    const done = await login(sandbox);
    expect(done.code).toBe(0);
    const stats = await fixture.stats();
    expect(stats.registered.map((r) => r.as)).toEqual(["as1", "as2"]);
    expect(stats.authorizeRequests.map((r) => r.as)).toEqual(["as1", "as2"]);
    expect(stats.foreignClients).toBe(0);
    expect(storedRecord(sandbox).current).toBe(`${fixture.base}/as2`);
    expect((await runCli(["index", ...flags(sandbox)], sandbox.env())).code).toBe(0);
  });

  test("a token file written before credentials were keyed by issuer is still used", async () => {
    const fixture = await startOAuthFixture();
    const sandbox = sandboxFor(fixture.url);
    expect((await login(sandbox)).code).toBe(0);
    const dir = join(sandbox.dataDir, "oauth");
    const [file] = readdirSync(dir);
    const record = storedRecord(sandbox);
    const credentials = record.issuers[record.current!]!;
    const { issuer: _t, ...tokens } = credentials.tokens!;
    const { issuer: _c, ...clientInformation } = credentials.clientInformation!;
    // The layout of the earlier releases: one registration, one token set, the discovered metadata.
    writeFileSync(
      join(dir, file!),
      JSON.stringify({
        serverUrl: fixture.url,
        clientInformation,
        tokens,
        discoveryState: {
          authorizationServerUrl: `${fixture.base}/`,
          authorizationServerMetadata: { issuer: fixture.base },
        },
      }),
    );
    const indexed = await runCli(["index", ...flags(sandbox)], sandbox.env());
    expect(indexed.code).toBe(0);
    expect(indexed.stdout).toContain("secure");
    expect((await fixture.stats()).authorizations).toBe(1);
  });
});

describe("4. step-up: the scope a refused call asks for", () => {
  test("a call refused for want of scope makes the server wait for a login, which asks for the scope held and the scope asked for", async () => {
    const fixture = await startOAuthFixture();
    const sandbox = sandboxFor(fixture.url);
    expect((await login(sandbox)).code).toBe(0);
    expect((await fixture.stats()).authorizeRequests[0]?.scope).toBe("mcp:tools");
    const proxy = await startHttpProxy(sandbox);
    scope.defer(() => proxy.stop());
    const client = await connectHttp(proxy.url);
    scope.defer(() => client.close());
    const call = (name: string) =>
      client.callTool(
        { name: "call_tool", arguments: { name: `secure__${name}`, arguments: {} } },
        CallToolResultSchema,
      );
    expect(textOf(await call("whoami"))).toContain("logged in to the protected fixture");

    const refused = await call("admin_report");
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("needs a login with more scope");
    expect(textOf(refused)).toContain("mcpproxy auth login secure");
    expect(storedRecord(sandbox).stepUpScope).toContain("mcp:admin");

    expect((await login(sandbox)).code).toBe(0);
    const asked = (await fixture.stats()).authorizeRequests.at(-1)?.scope?.split(" ") ?? [];
    expect(asked).toEqual(expect.arrayContaining(["mcp:tools", "mcp:admin"]));
    expect(storedRecord(sandbox).stepUpScope).toBeUndefined();
    const works = await eventually(
      async () => textOf(await call("admin_report")),
      (text) => text.includes("all systems nominal"),
      15_000,
    );
    expect(works).toContain("all systems nominal");
    expect(textOf(await call("whoami"))).toContain("logged in to the protected fixture");
  });

  test("a server that refuses every scope ends the login after a bounded number of authorizations", async () => {
    const fixture = await startOAuthFixture(["--insufficient-always"]);
    const refused = await login(sandboxFor(fixture.url));
    expect(refused.code).toBe(1);
    const stats = await fixture.stats();
    // The second token holds the scope asked for: the SDK does not authorize again for it.
    expect(stats.authorizeRequests.length).toBe(2);
    expect(stats.authorizeRequests.at(-1)?.scope?.split(" ")).toEqual(
      expect.arrayContaining(["mcp:tools", "mcp:admin"]),
    );
  });

  test("a token answer without scope holds the scope asked for (RFC 6749): no authorization for a scope it has", async () => {
    const fixture = await startOAuthFixture(["--insufficient-always", "--token-scope", "none"]);
    const refused = await login(sandboxFor(fixture.url));
    expect(refused.code).toBe(1);
    expect((await fixture.stats()).authorizeRequests.length).toBe(2);
  });

  test("three authorizations at most, the third one's token tried too (conformance auth/scope-retry-limit)", async () => {
    // Tokens granted with an empty scope: every refusal asks for more, as far as the proxy knows.
    const fixture = await startOAuthFixture(["--insufficient-always", "--token-scope", "empty"]);
    const refused = await login(sandboxFor(fixture.url));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("still refused the token after 3 authorizations");
    const stats = await fixture.stats();
    expect(stats.authorizeRequests.length).toBe(3);
    expect(stats.insufficientScope).toBe(3);
  });
});

describe("5. a client metadata document URL as the client id", () => {
  const documentUrl = "https://client.example.test/mcpproxy/client.json";

  test("the person's oauth.clientMetadataUrl is the client id where the authorization server takes one: no registration", async () => {
    const fixture = await startOAuthFixture(["--cimd"]);
    const sandbox = sandboxFor(fixture.url, { clientMetadataUrl: documentUrl });
    const done = await login(sandbox);
    expect(done.code).toBe(0);
    const stats = await fixture.stats();
    expect(stats.registrations).toBe(0);
    expect(stats.authorizeRequests[0]).toMatchObject({
      clientId: documentUrl,
      redirectUri: "http://127.0.0.1:33418/callback",
    });
    expect((await runCli(["index", ...flags(sandbox)], sandbox.env())).code).toBe(0);

    // An authorization server that does not take documents: mcpproxy registers as before.
    const older = await startOAuthFixture();
    expect((await login(sandboxFor(older.url, { clientMetadataUrl: documentUrl }))).code).toBe(0);
    expect((await older.stats()).registrations).toBe(1);
  });

  test("a clientMetadataUrl that is not an https URL with a path is a config error naming the key", async () => {
    const fixture = await startOAuthFixture(["--cimd"]);
    for (const bad of ["http://client.example.test/doc.json", "https://client.example.test/"]) {
      const result = await login(sandboxFor(fixture.url, { clientMetadataUrl: bad }));
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("oauth");
      expect(result.stderr).toContain("https:// URL with a path");
    }
    expect((await fixture.stats()).authorizeRequests).toHaveLength(0);
  });

  test("an agent cannot set oauth.clientMetadataUrl through upstream_servers, on a new server or an existing one", async () => {
    const fixture = await startOAuthFixture(["--cimd"]);
    const sandbox = sandboxFor(fixture.url);
    const before = readFileSync(sandbox.configPath, "utf8");
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    const servers = (operation: string, args: Record<string, unknown>) =>
      proxy.client.callTool(
        { name: "upstream_servers", arguments: { operation, ...args } },
        CallToolResultSchema,
      );
    const added = await servers("add", {
      name: "evil",
      server: { url: fixture.url, oauth: { clientMetadataUrl: "https://attacker.example.test/client.json" } },
    });
    expect(added.isError).toBe(true);
    expect(textOf(added)).toContain("oauth.clientMetadataUrl: this key is not for an agent to set");
    const updated = await servers("update", {
      name: "secure",
      server: { oauth: { clientMetadataUrl: "https://attacker.example.test/client.json" } },
    });
    expect(updated.isError).toBe(true);
    expect(textOf(updated)).toContain("oauth.clientMetadataUrl: this key is not for an agent to set");
    expect(readFileSync(sandbox.configPath, "utf8")).toBe(before);
    expect((await fixture.stats()).authorizeRequests).toHaveLength(0);
  });
});

describe("6. two logins at once", () => {
  /** `auth login` left running, its browser waiting for `gate` to exist. */
  function startLogin(sandbox: Sandbox, name: string, gate: string) {
    const child = Bun.spawn([requireBinary(), "auth", "login", name, ...flags(sandbox)], {
      env: sandbox.env({ BROWSER: gatedBrowser(gate) }),
      stdout: "pipe",
      stderr: "pipe",
    });
    scope.defer(() => child.kill());
    return { child, stderr: watchOutput(child.stderr), stdout: watchOutput(child.stdout) };
  }

  test("a second login of the same server says one is running, and the first one completes", async () => {
    const fixture = await startOAuthFixture();
    const sandbox = sandboxFor(fixture.url);
    // Logged in once: the stored registration names a callback port, which both would want.
    expect((await login(sandbox)).code).toBe(0);
    const gate = join(sandbox.dir, "approve");
    const first = startLogin(sandbox, "secure", gate);
    await first.stderr.waitFor(/Waiting for the login to finish/, 15_000);
    const second = await login(sandbox);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain("A login to secure is already running");
    writeFileSync(gate, "");
    expect(await first.child.exited).toBe(0);
    await first.stdout.done;
    expect(first.stdout.text()).toContain("Logged in to secure");
    const stats = await fixture.stats();
    expect(stats.registrations).toBe(1);
    expect(stats.codeExchanges).toBe(2);
    expect((await runCli(["index", ...flags(sandbox)], sandbox.env())).code).toBe(0);
  });

  test("two servers that need the same fixed callback port: the second login waits for the first, then completes", async () => {
    const one = await startOAuthFixture(["--cimd"]);
    const two = await startOAuthFixture(["--cimd"]);
    const oauth = { clientMetadataUrl: "https://client.example.test/mcpproxy/client.json" };
    const sandbox = sandboxFor(one.url, oauth, { other: { url: two.url, oauth } });
    const gate = join(sandbox.dir, "approve");
    const first = startLogin(sandbox, "secure", gate);
    await first.stderr.waitFor(/Waiting for the login to finish/, 15_000);
    const second = startLogin(sandbox, "other", gate);
    await second.stderr.waitFor(/callback port 33418 is in use .*waiting/, 15_000);
    expect((await two.stats()).authorizeRequests).toHaveLength(0);
    writeFileSync(gate, "");
    expect(await Promise.all([first.child.exited, second.child.exited])).toEqual([0, 0]);
    expect((await one.stats()).codeExchanges).toBe(1);
    expect((await two.stats()).codeExchanges).toBe(1);
  });

  test("logins of two servers run side by side", async () => {
    const one = await startOAuthFixture();
    const two = await startOAuthFixture();
    const sandbox = sandboxFor(one.url, undefined, { other: { url: two.url } });
    const gate = join(sandbox.dir, "approve");
    const logins = [startLogin(sandbox, "secure", gate), startLogin(sandbox, "other", gate)];
    // Both wait for the browser at once: neither waits for the other.
    for (const running of logins) await running.stderr.waitFor(/Waiting for the login to finish/, 15_000);
    writeFileSync(gate, "");
    expect(await Promise.all(logins.map((running) => running.child.exited))).toEqual([0, 0]);
    expect((await one.stats()).codeExchanges).toBe(1);
    expect((await two.stats()).codeExchanges).toBe(1);
    const status = await runCli(["auth", "status", "--json", ...flags(sandbox)], sandbox.env());
    const states = (JSON.parse(status.stdout) as { servers: { state: string }[] }).servers.map(
      (s) => s.state,
    );
    expect(states).toEqual(["logged in", "logged in"]);
  });
});
