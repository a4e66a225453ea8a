import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { connectPostgres } from "../src/store/postgres/connect.ts";
import {
  cleanupAfterEach,
  connectHttp,
  eventually,
  fixtureEntry,
  ROOT,
  runCli,
  type Sandbox,
  startHttpProxy,
  watchOutput,
} from "./helpers.ts";
import {
  POSTGRES_MISSING,
  postgresBinDir,
  startTempPostgres,
  type TempPostgres,
} from "./support/temp-postgres.ts";

// A loaded 2-core machine can be slow without anything being wrong: a generous bound, not 5 s.
setDefaultTimeout(60_000);

/**
 * Statistics and rate limits of `serve --store` replicas through the compiled binary, with a real
 * PostgreSQL: calls spread over three replicas are counted once each and every replica (and
 * `mcpproxy stats --store`) shows the total; a rate limit holds for the replicas together; with
 * PostgreSQL stopped the replicas keep answering calls, what they counted meanwhile reaches the
 * store when it is back, and their rate limits fall back to a local share and recover; a reset
 * with the store is for every replica; an agent cannot lift the shared limit.
 */
const hasPostgres = postgresBinDir() !== undefined;
const AS_FIXTURE = join(ROOT, "tests", "fixtures", "authorization-server.ts");
const AUDIENCE = "https://mcpproxy.test/mcp";
if (!hasPostgres) process.stderr.write(POSTGRES_MISSING);

const scope = cleanupAfterEach();
const storeEnv = { MCPPROXY_STORE_KEY: randomBytes(32).toString("hex") };
let pg: TempPostgres;
beforeAll(async () => {
  if (hasPostgres) pg = await startTempPostgres();
});
afterAll(async () => {
  await pg?.cleanup();
});

const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");

const echo = async (client: Client, server: string, message: string) =>
  CallToolResultSchema.parse(
    await client.callTool(
      { name: "call_tool", arguments: { name: `${server}__echo`, arguments: { message } } },
      CallToolResultSchema,
      { timeout: 30_000 },
    ),
  );

interface Stat {
  totals: { calls: number; limited: number };
  top: { server: string; tool: string; calls: number }[];
  limits?: { server: string; rejected: Record<string, number> }[];
}
const toolsStat = async (client: Client) =>
  (await client.callTool({ name: "tools_stat", arguments: {} })).structuredContent as unknown as Stat;
const callsOf = (stat: Stat, server: string) =>
  stat.top.find((t) => t.server === server && t.tool === "echo")?.calls ?? 0;

/** `count` replicas of one config, each with its own data dir, sharing the store. */
async function startReplicas(
  sandbox: Sandbox,
  count: number,
  database: string,
  connect: (url: URL) => Promise<Client> = connectHttp,
) {
  const url = pg.url.replace(/\/mcpproxy$/, `/${database}`);
  await runCreateDb(database);
  const replicas = [];
  for (let i = 0; i < count; i++) {
    const dataDir = join(sandbox.dir, `replica-${i}`);
    mkdirSync(dataDir, { recursive: true });
    const proxy = await startHttpProxy(sandbox, ["--store", url, "--data-dir", dataDir], storeEnv);
    scope.defer(() => proxy.stop());
    const client = await connect(new URL("/mcp", proxy.url));
    scope.defer(() => client.close());
    replicas.push({ proxy, client });
  }
  return { url, replicas };
}

async function runCreateDb(name: string) {
  const sql = connectPostgres(pg.url);
  try {
    await sql.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await sql.end();
  }
}

describe.if(hasPostgres)("statistics across replicas", () => {
  test("every replica and `stats --store` show the calls of all; calls made while PostgreSQL is down are counted when it is back; a reset is for all", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    const { url, replicas } = await startReplicas(sandbox, 3, "stats_e2e");
    const spread = [5, 3, 2];
    for (const [r, n] of spread.entries())
      for (let i = 0; i < n; i++)
        expect((await echo(replicas[r]!.client, "fx", `r${r}-${i}`)).isError).toBeFalsy();
    for (const { client } of replicas) {
      const stat = await eventually(
        () => toolsStat(client),
        (s) => callsOf(s, "fx") === 10,
        15_000,
      );
      expect(callsOf(stat, "fx")).toBe(10);
    }
    const cli = await runCli(
      [
        "stats",
        "--json",
        "--store",
        url,
        "--config",
        sandbox.configPath,
        "--data-dir",
        join(sandbox.dir, "cli"),
      ],
      sandbox.env(storeEnv),
    );
    expect(cli.code).toBe(0);
    expect(callsOf(JSON.parse(cli.stdout) as Stat, "fx")).toBe(10);

    // PostgreSQL stops: calls are still answered, and counted where they were made.
    await pg.stop();
    try {
      for (let i = 0; i < 4; i++) {
        const result = await echo(replicas[1]!.client, "fx", `down-${i}`);
        expect(result.isError).toBeFalsy();
        expect(textOf(result)).toContain(`down-${i}`);
      }
      expect(callsOf(await toolsStat(replicas[1]!.client), "fx")).toBe(14);
      await replicas[1]!.proxy.stderr.waitFor(
        /could not write the call statistics to the shared store/,
        10_000,
      );
    } finally {
      await pg.start();
    }
    // ... and reach the store, and so the other replicas, once it is back.
    for (const { client } of [replicas[0]!, replicas[2]!]) {
      const stat = await eventually(
        () => toolsStat(client),
        (s) => callsOf(s, "fx") === 14,
        20_000,
      );
      expect(callsOf(stat, "fx")).toBe(14);
    }

    const reset = await runCli(
      [
        "stats",
        "--reset",
        "--store",
        url,
        "--config",
        sandbox.configPath,
        "--data-dir",
        join(sandbox.dir, "cli"),
      ],
      sandbox.env(storeEnv),
    );
    expect(reset.stdout).toContain("Cleared the figures of 1 tool(s) for every replica of");
    for (const { client } of replicas) {
      const stat = await eventually(
        () => toolsStat(client),
        (s) => callsOf(s, "fx") === 0,
        10_000,
      );
      expect(stat.totals.calls).toBe(0);
    }
  }, 120_000);
});

describe.if(hasPostgres)("a rate limit across replicas", () => {
  test("N a minute for three replicas together; with PostgreSQL down each holds its share and never fails a call for it; an agent cannot lift it", async () => {
    const sandbox = scope.sandbox();
    // 1 a minute, a burst of 6: six calls in all, and the next token a minute away.
    sandbox.writeConfig({
      mcpServers: {
        api: { ...fixtureEntry(), rateLimit: { perMinute: 1, burst: 6 }, queueTimeoutMs: 1_000 },
      },
    });
    const { replicas } = await startReplicas(sandbox, 3, "limits_e2e");
    const results = [];
    for (let i = 0; i < 15; i++) results.push(await echo(replicas[i % 3]!.client, "api", `call-${i}`));
    const admitted = results.filter((result) => !result.isError);
    expect(admitted.length).toBe(6);
    for (const refused of results.filter((result) => result.isError)) {
      const limit = refused._meta?.["mcpproxy/limit"] as {
        server: string;
        limit: string;
        retryAfterMs: number;
      };
      expect(limit).toMatchObject({ server: "api", limit: "rate" });
      expect(limit.retryAfterMs).toBeGreaterThan(1_000);
      expect(textOf(refused)).toContain("1 calls a minute (burst 6)");
    }
    const rejected = await Promise.all(
      replicas.map(async ({ client }) => (await toolsStat(client)).limits?.[0]?.rejected.rate ?? 0),
    );
    expect(rejected.reduce((a, b) => a + b, 0)).toBe(9);

    // The agent's attempt to lift it is refused with the store as without.
    const lift = await replicas[0]!.client.callTool({
      name: "upstream_servers",
      arguments: { operation: "update", name: "api", server: { rateLimit: false } },
    });
    expect(lift.isError).toBe(true);
    expect(JSON.parse(readFileSync(sandbox.configPath, "utf8")).mcpServers.api.rateLimit).toEqual({
      perMinute: 1,
      burst: 6,
    });
    expect((await echo(replicas[0]!.client, "api", "after-lift")).isError).toBe(true);

    await pg.stop();
    try {
      // Every call ends promptly with an answer or a rate refusal, never a store error: each
      // replica's share of the burst (6/3 = 2) goes, the rest is refused by the rate.
      const during = [];
      for (let i = 0; i < 9; i++) during.push(await echo(replicas[i % 3]!.client, "api", `down-${i}`));
      const answered = during.filter((result) => !result.isError);
      expect(answered.length).toBe(6);
      for (const refused of during.filter((result) => result.isError))
        expect(refused._meta?.["mcpproxy/limit"]).toMatchObject({ limit: "rate" });
      for (const { proxy } of replicas) await proxy.stderr.waitFor(/its 1\/3 share/, 5_000);
    } finally {
      await pg.start();
    }
    for (const { proxy } of replicas)
      await proxy.stderr.waitFor(/limits are held across the replicas again/, 15_000);
    // Back on the shared bucket, which is empty: refused again, on every replica.
    for (const { client } of replicas) expect((await echo(client, "api", "back")).isError).toBe(true);
  }, 120_000);
});

describe.if(hasPostgres)("principals across replicas", () => {
  test("a principal's quota holds across replicas, and its own figures add up there while another's stay apart", async () => {
    const asChild = Bun.spawn([process.execPath, AS_FIXTURE, "--audience", AUDIENCE], { stdout: "pipe" });
    scope.defer(() => asChild.kill());
    const asPort = Number(await watchOutput(asChild.stdout).waitFor(/"port":(\d+)/, 10_000));
    const tokenFor = async (client: string) => {
      const response = await fetch(`http://127.0.0.1:${asPort}/token`, {
        method: "POST",
        body: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: client,
          client_secret: `${client}-secret`,
          scope: "mcp:tools",
        }),
      });
      return ((await response.json()) as { access_token: string }).access_token;
    };
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: { fx: fixtureEntry() },
      mcpproxy: {
        stats: true,
        requireToken: true,
        httpAuth: {
          issuer: `http://127.0.0.1:${asPort}`,
          audience: AUDIENCE,
          requiredScopes: ["mcp:tools"],
          access: [{ match: { sub: "quentin" }, callsPerMinute: 3 }, { match: { sub: "alice" } }],
        },
      },
    });
    const [quentinToken, aliceToken] = [await tokenFor("quentin"), await tokenFor("alice")];
    const as = (token: string) => async (url: URL) => {
      const client = new Client({ name: "principal-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(url, {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      return client;
    };
    const { replicas } = await startReplicas(sandbox, 2, "principals_e2e", as(quentinToken));
    const alice = await Promise.all(
      replicas.map(async ({ proxy }) => {
        const client = await as(aliceToken)(new URL("/mcp", proxy.url));
        scope.defer(() => client.close());
        return client;
      }),
    );
    // Quentin's 3 a minute: two calls on replica 0 and one on replica 1 use them all.
    for (const r of [0, 0, 1]) expect((await echo(replicas[r]!.client, "fx", `q${r}`)).isError).toBeFalsy();
    for (const r of [1, 0]) {
      const refused = await echo(replicas[r]!.client, "fx", "one too many");
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain("Your call quota of 3 calls a minute is used up");
      expect(refused._meta?.["mcpproxy/limit"]).toMatchObject({ limit: "rate" });
    }
    // Another principal is not held by Quentin's quota, on either replica.
    for (const client of alice) expect((await echo(client, "fx", "alice")).isError).toBeFalsy();

    type Yours = { yours: { principal: string; totals: { calls: number } }; totals: { calls: number } };
    const statOf = async (client: Client) =>
      (await client.callTool({ name: "tools_stat", arguments: {} })).structuredContent as unknown as Yours;
    const quentinSees = await eventually(
      () => statOf(replicas[1]!.client),
      (s) => s.totals.calls === 5 && s.yours.totals.calls === 3,
      15_000,
    );
    expect(quentinSees.yours).toMatchObject({ principal: "quentin", totals: { calls: 3 } });
    const aliceSees = await eventually(
      () => statOf(alice[0]!),
      (s) => s.totals.calls === 5,
      15_000,
    );
    // Everyone's total, but only her own calls as hers: none of Quentin's.
    expect(aliceSees.yours).toMatchObject({ principal: "alice", totals: { calls: 2 } });
  }, 120_000);
});
