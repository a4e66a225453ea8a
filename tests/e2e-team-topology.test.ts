import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Client as ModernClient } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1HttpTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { cleanupAfterEach, eventually, fixtureEntry, runCli, type Sandbox } from "./helpers.ts";
import { NGINX, NGINX_MISSING } from "./support/nginx.ts";
import { storeCommandEnv } from "./support/replicas.ts";
import { answeredBy, startTeam, type Team } from "./support/team.ts";
import {
  POSTGRES_MISSING,
  postgresBinDir,
  startTempPostgres,
  type TempPostgres,
} from "./support/temp-postgres.ts";

setDefaultTimeout(180_000);

/**
 * The team deployment as it runs, without containers: PostgreSQL in a temporary directory, three
 * `mcpproxy serve --store` replicas on 127.0.0.1 and nginx in front with the shipped configuration.
 * 2026-07-28 clients through nginx, with a nonce in every call: nothing lost or crossed; a replica
 * killed mid-load; PostgreSQL restarted mid-load; a 2025 session whose replica died.
 */
const missing = [
  postgresBinDir() ? "" : POSTGRES_MISSING,
  NGINX ? "" : `skipping the topology tests: ${NGINX_MISSING}\n`,
]
  .filter(Boolean)
  .join("");
if (missing) process.stderr.write(missing);

const scope = cleanupAfterEach();
let pg: TempPostgres;
beforeAll(async () => {
  if (!missing) pg = await startTempPostgres();
});
afterAll(async () => {
  await pg?.cleanup();
});

interface LoadResult {
  ok: number;
  crossed: string[];
  failed: string[];
}

/** Each client calls echo `calls` times with its own nonces, one call at a time; `onCall` after each. */
async function runLoad(
  clients: ModernClient[],
  calls: number,
  onCall: (done: number) => void | Promise<void> = () => {},
  search = false,
): Promise<LoadResult> {
  const result: LoadResult = { ok: 0, crossed: [], failed: [] };
  let done = 0;
  await Promise.all(
    clients.map(async (client, worker) => {
      for (let i = 0; i < calls; i++) {
        const nonce = `w${worker}-c${i}-${Math.random().toString(36).slice(2, 10)}`;
        try {
          if (search && i % 2 === 1) {
            const found = await client.callTool({
              name: "retrieve_tools",
              arguments: { query: "echo back the message" },
            });
            if (!JSON.stringify(found.content).includes("fixture__echo"))
              result.crossed.push(`search ${nonce}`);
            else result.ok++;
          } else {
            const answer = await client.callTool({
              name: "call_tool",
              arguments: { name: "fixture__echo", arguments: { message: nonce } },
            });
            const text = JSON.stringify(answer.content);
            if (
              !answer.isError &&
              text === JSON.stringify([{ type: "text", text: `fixture echo: ${nonce}` }])
            )
              result.ok++;
            else result.crossed.push(`${nonce}: ${text.slice(0, 200)}`);
          }
        } catch (error) {
          result.failed.push(String((error as Error).message ?? error));
        }
        await onCall(++done);
      }
    }),
  );
  return result;
}

/** An error a client may retry on another replica: the balancer's 502/503/504, a reset connection. */
const RETRYABLE = /\b50[234]\b|ECONNRESET|socket|closed|terminated|fetch failed/i;

async function team(
  servers: Record<string, unknown> = { fixture: fixtureEntry() },
): Promise<Team & { sandbox: Sandbox }> {
  const sandbox = scope.sandbox();
  sandbox.writeConfig({ mcpServers: servers });
  const deployment = await startTeam(sandbox, pg);
  scope.defer(() => deployment.stop());
  return { ...deployment, sandbox };
}

/** `mcpproxy ARGS --store` as a person runs it on a machine of their own. */
function personCli(deployment: Team & { sandbox: Sandbox }, args: string[]) {
  const { sandbox } = deployment;
  const flags = ["--config", sandbox.configPath, "--data-dir", `${sandbox.dir}/person`];
  return runCli([...args, ...flags, "--store", deployment.storeUrl], storeCommandEnv(sandbox));
}

/** How many calls of fixture/echo the statistics of the whole deployment hold. */
async function echoCallsOf(deployment: Team & { sandbox: Sandbox }): Promise<number> {
  const report = JSON.parse((await personCli(deployment, ["stats", "--json"])).stdout) as {
    top: { server: string; tool: string; calls: number }[];
  };
  return report.top.find((row) => row.server === "fixture" && row.tool === "echo")?.calls ?? 0;
}

describe.skipIf(Boolean(missing))("three replicas behind nginx", () => {
  test("2026-07-28 clients spread over every replica: no call lost or crossed", async () => {
    const deployment = await team();
    const clients = await Promise.all(Array.from({ length: 9 }, (_, i) => deployment.modernClient(`c${i}`)));
    const load = await runLoad(clients, 40);
    expect(load.failed).toEqual([]);
    expect(load.crossed).toEqual([]);
    expect(load.ok).toBe(360);
    const spread = answeredBy(deployment.nginx);
    for (const replica of deployment.replicas) expect(spread.get(replica.url.host) ?? 0).toBeGreaterThan(30);
  });

  test("a replica killed mid-load: only its calls in flight fail, with a retryable error; the rest carry on", async () => {
    const deployment = await team();
    const clients = await Promise.all(Array.from({ length: 8 }, (_, i) => deployment.modernClient(`k${i}`)));
    const victim = deployment.replicas[1]!;
    let killed: Promise<number> | undefined;
    const load = await runLoad(clients, 60, (done) => {
      if (done === 150) killed = victim.kill();
    });
    await killed;
    expect(load.crossed).toEqual([]);
    // At most one call of each client can have been in flight on the killed replica.
    expect(load.failed.length).toBeLessThanOrEqual(clients.length);
    for (const failure of load.failed) expect(failure).toMatch(RETRYABLE);
    expect(load.ok + load.failed.length).toBe(480);
    process.stderr.write(
      `SIGKILL mid-load: ${load.failed.length} of 480 calls failed (in flight on the dead replica)\n`,
    );
    // And after it, every call is answered by the two left.
    const after = await runLoad(clients, 10);
    expect(after.failed).toEqual([]);
    expect(after.ok).toBe(80);
  });

  test("PostgreSQL restarted mid-load: searches and calls are answered throughout, and the store catches up", async () => {
    const deployment = await team();
    const clients = await Promise.all(Array.from({ length: 6 }, (_, i) => deployment.modernClient(`p${i}`)));
    let restarted: Promise<void> | undefined;
    const load = await runLoad(
      clients,
      80,
      (done) => {
        if (done === 60) restarted = pg.restart({ downMs: 1_500 });
      },
      true,
    );
    await restarted;
    expect(load.failed).toEqual([]);
    expect(load.crossed).toEqual([]);
    expect(load.ok).toBe(480);
    // Nothing acknowledged is lost: the calls counted while the store was down reach it.
    const counted = await eventually(
      () => echoCallsOf(deployment),
      (calls) => calls === 240,
      20_000,
    );
    expect(counted).toBe(240);
    for (const replica of deployment.replicas) expect(replica.stderr.text()).not.toMatch(/ERROR/);
  });

  test("an approval given on another machine is honoured by every replica behind nginx", async () => {
    const deployment = await team({
      held: { ...fixtureEntry({ args: ["--name", "held"] }), quarantined: true },
    });
    const client = await deployment.modernClient();
    const call = () =>
      client.callTool({ name: "call_tool", arguments: { name: "held__echo", arguments: { message: "m" } } });
    expect((await call()).isError).toBe(true);
    await eventually(
      () => personCli(deployment, ["approve"]),
      (review) => review.stdout.includes("held"),
      20_000,
    );
    expect((await personCli(deployment, ["approve", "held"])).code).toBe(0);
    // Each replica pulls the approval on its own (within a second): until then, round-robin may
    // still reach one that has not. Then nine calls in a row, three rounds of the three, all answered.
    const nineInARow = async () => {
      const answers = [];
      for (let i = 0; i < 9; i++) answers.push(await call());
      return answers;
    };
    await eventually(nineInARow, (answers) => answers.every((answer) => !answer.isError), 10_000);
    const before = answeredBy(deployment.nginx);
    for (const answer of await nineInARow()) expect(answer.isError).toBeFalsy();
    const after = answeredBy(deployment.nginx);
    for (const replica of deployment.replicas)
      expect((after.get(replica.url.host) ?? 0) - (before.get(replica.url.host) ?? 0)).toBeGreaterThan(0);
  });

  test("a rate limit of N a minute holds for the three replicas together", async () => {
    const deployment = await team({
      fixture: { ...fixtureEntry(), rateLimit: { perMinute: 1, burst: 6 }, queueTimeoutMs: 500 },
    });
    const clients = await Promise.all(Array.from({ length: 3 }, (_, i) => deployment.modernClient(`r${i}`)));
    const answers = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        clients[i % 3]!.callTool({
          name: "call_tool",
          arguments: { name: "fixture__echo", arguments: { message: `n${i}` } },
        }),
      ),
    );
    const admitted = answers.filter((answer) => !answer.isError);
    const refused = answers.filter((answer) => answer.isError);
    expect(admitted.length).toBe(6);
    for (const answer of refused) expect(JSON.stringify(answer._meta)).toContain('"limit":"rate"');
    const spread = answeredBy(deployment.nginx);
    expect(deployment.replicas.filter((replica) => (spread.get(replica.url.host) ?? 0) > 0).length).toBe(3);
  });

  test("a 2025 session whose replica died gets 404 and a new session on another replica", async () => {
    const deployment = await team();
    const legacy = new V1Client({ name: "legacy", version: "1.0.0" });
    await legacy.connect(new V1HttpTransport(new URL("/mcp", deployment.nginx.url)));
    scope.defer(() => legacy.close());
    const echo = (client: V1Client, message: string) =>
      client.callTool({ name: "call_tool", arguments: { name: "fixture__echo", arguments: { message } } });
    expect((await echo(legacy, "one")).content).toEqual([{ type: "text", text: "fixture echo: one" }]);
    const holder = [...answeredBy(deployment.nginx).keys()].at(-1);
    const replica = deployment.replicas.find((r) => r.url.host === holder)!;
    expect(replica).toBeDefined();
    await replica.kill();
    const lost = await echo(legacy, "two").then(
      () => "answered",
      (error: Error) => error.message,
    );
    expect(lost).toMatch(/404|not found/i);
    const again = new V1Client({ name: "legacy-again", version: "1.0.0" });
    await again.connect(new V1HttpTransport(new URL("/mcp", deployment.nginx.url)));
    scope.defer(() => again.close());
    const answer = await eventually(
      () => echo(again, "three"),
      (result) => !result.isError,
      10_000,
    );
    expect(answer.content).toEqual([{ type: "text", text: "fixture echo: three" }]);
  });
});
