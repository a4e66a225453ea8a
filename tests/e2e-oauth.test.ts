import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  connectHttp,
  createSandbox,
  eventually,
  ROOT,
  requireBinary,
  runCli,
  type Sandbox,
  startHttpProxy,
  watchOutput,
} from "./helpers.ts";
import { consoleSession } from "./support/console-session.ts";
import { keepStartedAcrossTests } from "./test-scope.ts";

// A loaded 2-core machine can be slow without anything being wrong: a generous bound, not 5 s.
setDefaultTimeout(60_000);

/**
 * OAuth to a remote server, through the compiled binary, against tests/fixtures/oauth-server.ts
 * (an MCP server with its own authorization server on 127.0.0.1). The "browser" is
 * scripts/conformance/fetch-url.mjs given as $BROWSER: it follows the authorization redirect to
 * mcpproxy's loopback callback, as a browser does once the user approved. Access tokens live 3 s,
 * so a refresh happens during the test.
 */
const TOKEN_TTL_S = 3;
// The tests are the steps of one login's life: the proxy the first starts, the next ones use
// (afterAll stops it).
keepStartedAcrossTests();

interface FixtureStats {
  registrations: number;
  authorizations: number;
  codeExchanges: number;
  refreshes: number;
  unauthorized: number;
  revoked: number;
}

async function startOAuthFixture() {
  const child = Bun.spawn(
    [process.execPath, join(ROOT, "tests", "fixtures", "oauth-server.ts"), "--ttl", String(TOKEN_TTL_S)],
    { stdout: "pipe", stderr: "inherit" },
  );
  const port = await watchOutput(child.stdout).waitFor(/\{"port":(\d+)\}/, 10_000);
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/mcp`,
    stats: async () => (await (await fetch(`${base}/admin/stats`)).json()) as FixtureStats,
    revoke: () => fetch(`${base}/admin/revoke`, { method: "POST" }),
    stop: () => child.kill(),
  };
}

const browser = `${process.execPath} ${join(ROOT, "scripts", "conformance", "fetch-url.mjs")}`;

/** Whether `check` comes true within the time (the shared polling loop of helpers.ts). */
const until = (check: () => Promise<boolean>, timeoutMs = 10_000) => eventually(check, (ok) => ok, timeoutMs);

const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");

describe("OAuth for remote servers", () => {
  let sandbox: Sandbox;
  let fixture: Awaited<ReturnType<typeof startOAuthFixture>>;
  let proxy: Awaited<ReturnType<typeof startHttpProxy>>;
  let client: Client;
  const args = () => ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
  const health = async () =>
    (await (await fetch(new URL("/health", proxy.url))).json()) as {
      servers: { name: string; state: string; error?: string }[];
    };
  const stateOf = async () => (await health()).servers.find((server) => server.name === "secure")?.state;
  const whoami = () =>
    client.callTool({ name: "call_tool", arguments: { name: "secure__whoami", arguments: {} } });

  beforeAll(async () => {
    requireBinary();
    sandbox = createSandbox();
    fixture = await startOAuthFixture();
    sandbox.writeConfig({ mcpServers: { secure: { url: fixture.url } } });
  }, 20_000);
  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await proxy?.stop();
    fixture?.stop();
    sandbox?.cleanup();
  });

  test("before a login: index says how to log in, and serve reports needs-login without retrying", async () => {
    const indexed = await runCli(["index", ...args()], sandbox.env());
    expect(indexed.stdout + indexed.stderr).toContain("mcpproxy auth login secure");
    const doctor = await runCli(["doctor", ...args()], sandbox.env());
    expect(doctor.stdout).toMatch(/needs-login/);
    proxy = await startHttpProxy(sandbox);
    expect(await until(async () => (await stateOf()) === "needs-login")).toBe(true);
    const before = (await fixture.stats()).unauthorized;
    await Bun.sleep(1500);
    // Not retried in a loop: at most a probe or two, no backoff storm against the server.
    expect((await fixture.stats()).unauthorized - before).toBeLessThanOrEqual(1);
    expect((await fixture.stats()).registrations).toBe(0);
  }, 30_000);

  test("auth login completes headlessly and the running proxy connects without a restart", async () => {
    const login = await runCli(["auth", "login", "secure", ...args()], sandbox.env({ BROWSER: browser }));
    expect(login.code).toBe(0);
    expect(login.stdout).toContain("Logged in to secure");
    expect(login.stderr).toContain("/authorize?");
    const stats = await fixture.stats();
    expect(stats.registrations).toBe(1);
    expect(stats.codeExchanges).toBe(1);
    // Stored 0600 in the data dir; the token itself is never printed.
    const dir = join(sandbox.dataDir, "oauth");
    const [file] = readdirSync(dir);
    expect(statSync(join(dir, file!)).mode & 0o777).toBe(0o600);
    const record = JSON.parse(readFileSync(join(dir, file!), "utf8")) as {
      current: string;
      issuers: Record<string, { tokens: { access_token: string } }>;
    };
    const stored = record.issuers[record.current]!;
    expect(login.stdout + login.stderr).not.toContain(stored.tokens.access_token);

    expect(await until(async () => (await stateOf()) === "connected")).toBe(true);
    client = await connectHttp(proxy.url);
    const result = await whoami();
    expect(textOf(result)).toContain("logged in to the protected fixture");
    expect(proxy.stderr.text()).not.toContain(stored.tokens.access_token);
  }, 30_000);

  test("an access token that expires is refreshed, and calls go on", async () => {
    const before = (await fixture.stats()).refreshes;
    await Bun.sleep(TOKEN_TTL_S * 1000 + 500);
    const result = await whoami();
    expect(result.isError).toBeFalsy();
    expect((await fixture.stats()).refreshes).toBeGreaterThan(before);
    const status = await runCli(["auth", "status", "--json", ...args()], sandbox.env());
    const [row] = (JSON.parse(status.stdout) as { servers: { state: string; refreshable: boolean }[] })
      .servers;
    expect(row).toMatchObject({ state: "logged in", refreshable: true });
  }, 30_000);

  test("a revoked login makes the server needs-login; a new login brings it back", async () => {
    await fixture.revoke();
    await Bun.sleep(TOKEN_TTL_S * 1000 + 500);
    const refused = await whoami();
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("mcpproxy auth login secure");
    expect(await until(async () => (await stateOf()) === "needs-login")).toBe(true);

    const login = await runCli(["auth", "login", "secure", ...args()], sandbox.env({ BROWSER: browser }));
    expect(login.code).toBe(0);
    expect(await until(async () => (await stateOf()) === "connected")).toBe(true);
    expect((await whoami()).isError).toBeFalsy();
  }, 40_000);

  test("the console's Log in runs the same login: the browser is sent to the server's sign-in page", async () => {
    await fixture.revoke();
    await Bun.sleep(TOKEN_TTL_S * 1000 + 500);
    await whoami();
    expect(await until(async () => (await stateOf()) === "needs-login")).toBe(true);
    const signedIn = await consoleSession([...args(), "--url", proxy.url.origin], sandbox.env());
    expect(signedIn.page).toContain('aria-label="Log in to secure"');
    const started = await signedIn.post("/console/servers", { operation: "login", name: "secure" });
    expect(started.status).toBe(200);
    const authorize = (/id="continue" href="([^"]+)"/.exec(await started.text())?.[1] ?? "").replaceAll(
      "&#38;",
      "&",
    );
    expect(authorize).toContain("/authorize?");
    // The person's browser follows it; the fixture approves at once and comes back to the callback.
    await (await fetch(authorize, { redirect: "follow" })).text();
    expect(await until(async () => (await stateOf()) === "connected", 20_000)).toBe(true);
    expect((await whoami()).isError).toBeFalsy();
  }, 60_000);

  test("auth logout forgets the login; errors name what to do", async () => {
    const logout = await runCli(["auth", "logout", "secure", ...args()], sandbox.env());
    expect(logout.stdout).toContain("Logged out of secure");
    expect(
      existsSync(join(sandbox.dataDir, "oauth")) && readdirSync(join(sandbox.dataDir, "oauth")).length,
    ).toBe(0);
    const unknown = await runCli(["auth", "login", "nope", ...args()], sandbox.env());
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("No server named nope");
  }, 20_000);
});
