import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createStoreKey } from "../src/store/store-key.ts";
import { eventually, ROOT, requireBinary, watchOutput } from "./helpers.ts";
import {
  freshDatabase,
  pgDump,
  psql,
  type Replica,
  STORE_KEY,
  startReplica,
  storeCli,
} from "./support/store-replicas.ts";
import {
  POSTGRES_MISSING,
  postgresBinDir,
  startTempPostgres,
  type TempPostgres,
} from "./support/temp-postgres.ts";

// A loaded 2-core machine can be slow without anything being wrong: a generous bound, not 5 s.
setDefaultTimeout(60_000);

/**
 * Upstream OAuth logins in the shared store, through the compiled binary: two `serve --store`
 * replicas and `mcpproxy auth login --store` against tests/fixtures/oauth-server.ts (an MCP server
 * with its own authorization server, refresh tokens rotated on every use). The login made once is
 * every replica's; it is sealed in the database, never in clear; a refresh on one replica is
 * written back and used by the other (with a rotated refresh token, a replica that missed it would
 * fail); without the key nothing of it can be read.
 */
const hasPostgres = postgresBinDir() !== undefined;
if (!hasPostgres) process.stderr.write(POSTGRES_MISSING);

/** Above the provider's 60 s refresh margin by 10 s: no refresh while the replicas pick the login up. */
const TOKEN_TTL_S = 70;
const REFRESH_MARGIN_S = 60;

const browser = `${process.execPath} ${join(ROOT, "scripts", "conformance", "fetch-url.mjs")}`;
const until = (check: () => Promise<boolean>, timeoutMs = 15_000) => eventually(check, (ok) => ok, timeoutMs);

async function startOAuthFixture() {
  const child = Bun.spawn(
    [process.execPath, join(ROOT, "tests", "fixtures", "oauth-server.ts"), "--ttl", String(TOKEN_TTL_S)],
    { stdout: "pipe", stderr: "inherit" },
  );
  const port = await watchOutput(child.stdout).waitFor(/\{"port":(\d+)\}/, 10_000);
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/mcp`,
    stats: async () =>
      (await (await fetch(`${base}/admin/stats`)).json()) as { refreshes: number; registrations: number },
    stop: () => child.kill(),
  };
}

interface Tokens {
  access_token: string;
  refresh_token?: string;
}

describe.skipIf(!hasPostgres)("upstream OAuth logins in the shared store", () => {
  let pg: TempPostgres;
  let url: string;
  let fixture: Awaited<ReturnType<typeof startOAuthFixture>>;
  const replicas: Replica[] = [];
  const one = () => replicas[0]!;
  const two = () => replicas[1]!;
  const stateOn = async (replica: Replica) =>
    ((await replica.servers("list")).servers as { name: string; state: string }[]).find(
      (s) => s.name === "secure",
    )?.state;
  const whoami = (replica: Replica) => replica.call("secure__whoami");
  /** The stored record, opened with the store's key as a replica does. */
  const storedTokens = async (): Promise<Tokens> => {
    const hex = await psql(
      url,
      "SELECT encode(sealed, 'hex') FROM mcpproxy.oauth_records WHERE server = 'secure'",
    );
    const key = createStoreKey(Buffer.from(STORE_KEY, "hex"));
    const record = JSON.parse(key.open(Buffer.from(hex, "hex"), "oauth:secure").toString("utf8")) as {
      current: string;
      issuers: Record<string, { tokens: Tokens }>;
    };
    return record.issuers[record.current]!.tokens;
  };

  beforeAll(async () => {
    requireBinary();
    pg = await startTempPostgres();
    url = await freshDatabase(pg.url, "logins");
    fixture = await startOAuthFixture();
    // Health checks far apart: the test decides when a request (and so a refresh) happens.
    const config = { mcpproxy: { healthCheckMs: 600_000 }, mcpServers: { secure: { url: fixture.url } } };
    replicas.push(await startReplica(url, config));
    replicas.push(await startReplica(url, config));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    fixture?.stop();
    await pg?.cleanup();
  });

  test("a login made once with `auth login --store` connects every replica, and is sealed in the store", async () => {
    for (const replica of replicas)
      expect(await until(async () => (await stateOn(replica)) === "needs-login")).toBe(true);
    const login = await storeCli(url, one().sandbox, ["auth", "login", "secure"], { BROWSER: browser });
    expect(login.code).toBe(0);
    expect(login.stdout).toContain("Logged in to secure");
    const loggedIn = performance.now();
    for (const replica of [two(), one()]) {
      expect(await until(async () => (await stateOn(replica)) === "connected")).toBe(true);
      expect((await whoami(replica)).text).toContain("logged in to the protected fixture");
    }
    process.stderr.write(
      `figure: auth login --store -> both replicas connected: ${(performance.now() - loggedIn).toFixed(0)} ms\n`,
    );
    expect((await fixture.stats()).registrations).toBe(1);

    const tokens = await storedTokens();
    expect(tokens.access_token).toStartWith("at-");
    const dump = await pgDump(url);
    expect(dump).toContain("oauth_records");
    expect(dump).not.toContain(tokens.access_token);
    expect(dump).not.toContain(tokens.refresh_token!);
    // Nothing of it in any data dir either, nor in what was printed.
    for (const replica of replicas) {
      const dir = join(replica.sandbox.dataDir, "oauth");
      expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
      expect(replica.proxy.stderr.text()).not.toContain(tokens.access_token);
    }
    expect(login.stdout + login.stderr).not.toContain(tokens.access_token);
    const status = await storeCli(url, two().sandbox, ["auth", "status", "--json"]);
    expect(JSON.parse(status.stdout).servers).toEqual([
      expect.objectContaining({ server: "secure", state: "logged in", refreshable: true }),
    ]);
  }, 60_000);

  test("a token refreshed on one replica is written back and used by the other", async () => {
    const before = await storedTokens();
    const refreshes = (await fixture.stats()).refreshes;
    // Once the token is within the refresh margin, the next request refreshes it (and rotates the refresh token).
    await Bun.sleep((TOKEN_TTL_S - REFRESH_MARGIN_S) * 1000 + 1_000);
    expect((await whoami(one())).isError).toBe(false);
    expect(await until(async () => (await storedTokens()).access_token !== before.access_token)).toBe(true);
    expect((await fixture.stats()).refreshes).toBe(refreshes + 1);
    await Bun.sleep(300); // the other replica hears of it (NOTIFY at commit)
    // The other replica uses the new token: had it kept the old one, its refresh token was spent.
    const answer = await whoami(two());
    expect(answer.isError).toBe(false);
    expect((await fixture.stats()).refreshes).toBe(refreshes + 1);
    expect(await pgDump(url)).not.toContain((await storedTokens()).access_token);
  }, 60_000);

  test("two replicas refreshing the same token at once: one refreshes, both use it, neither is logged out", async () => {
    const before = await storedTokens();
    const refreshes = (await fixture.stats()).refreshes;
    await Bun.sleep((TOKEN_TTL_S - REFRESH_MARGIN_S) * 1000 + 1_000);
    // The refresh token rotates: a second refresh with it would be refused (invalid_grant).
    const answers = await Promise.all([whoami(one()), whoami(two()), whoami(one()), whoami(two())]);
    expect(answers.map((answer) => answer.isError)).toEqual([false, false, false, false]);
    expect((await fixture.stats()).refreshes).toBe(refreshes + 1);
    expect((await storedTokens()).access_token).not.toBe(before.access_token);
    for (const replica of replicas) expect(await stateOn(replica)).toBe("connected");
  }, 60_000);

  test("without the store's key the login cannot be read: a replica or command with another key is refused", async () => {
    const hex = await psql(
      url,
      "SELECT encode(sealed, 'hex') FROM mcpproxy.oauth_records WHERE server = 'secure'",
    );
    expect(() => createStoreKey(randomBytes(32)).open(Buffer.from(hex, "hex"), "oauth:secure")).toThrow();
    // Nor under another server's name with the right key: a sealed record cannot be moved.
    expect(() =>
      createStoreKey(Buffer.from(STORE_KEY, "hex")).open(Buffer.from(hex, "hex"), "oauth:other"),
    ).toThrow();
    const wrong = { MCPPROXY_STORE_KEY: randomBytes(32).toString("hex") };
    const status = await storeCli(url, one().sandbox, ["auth", "status"], wrong);
    expect(status.code).not.toBe(0);
    expect(status.stderr).toContain("MCPPROXY_STORE_KEY is not the key");
    const serve = Bun.spawn(
      [
        requireBinary(),
        "serve",
        "--transport",
        "http",
        "--port",
        "0",
        "--store",
        url,
        "--config",
        one().sandbox.configPath,
      ],
      {
        env: one().sandbox.env({ ...wrong, MCPPROXY_DATA_DIR: join(one().sandbox.dir, "other-data") }),
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    const [code, stderr] = await Promise.all([serve.exited, new Response(serve.stderr).text()]);
    expect(code).not.toBe(0);
    expect(stderr).toContain("MCPPROXY_STORE_KEY is not the key");
  }, 30_000);
});
