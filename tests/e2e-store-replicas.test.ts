import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import postgres from "postgres";
import {
  cleanupAfterEach,
  connectHttp,
  eventually,
  fixtureEntry,
  retrieve,
  runCli,
  type Sandbox,
  startHttpFixture,
} from "./helpers.ts";
import { startReplica, storeCommandEnv } from "./support/replicas.ts";
import { freshDatabase } from "./support/store-databases.ts";
import {
  POSTGRES_MISSING,
  postgresBinDir,
  startTempPostgres,
  type TempPostgres,
} from "./support/temp-postgres.ts";

setDefaultTimeout(120_000);

/**
 * Replicas of a team deployment sharing one PostgreSQL: the catalog copied both ways, the lease
 * that says who indexes (and its failover), and a person's approval on one machine honoured by
 * every replica, through the compiled binary and a real PostgreSQL.
 */
const hasPostgres = postgresBinDir() !== undefined;
if (!hasPostgres) process.stderr.write(POSTGRES_MISSING);

const scope = cleanupAfterEach();
let pg: TempPostgres;

beforeAll(async () => {
  if (hasPostgres) pg = await startTempPostgres();
});
afterAll(async () => {
  await pg?.cleanup();
});

async function toolsIn(url: string): Promise<string[]> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ name: string }[]>`SELECT name FROM mcpproxy.tools ORDER BY name`;
    return rows.map((row) => row.name);
  } finally {
    await sql.end();
  }
}

const echoCall = (message: string) => ({
  name: "call_tool",
  arguments: { name: "held__echo", arguments: { message } },
});

function heldConfig(sandbox: Sandbox) {
  sandbox.writeConfig({
    mcpServers: { held: { ...fixtureEntry({ args: ["--name", "held"] }), quarantined: true } },
  });
}

describe.skipIf(!hasPostgres)("replicas sharing a store", () => {
  test("the first replica takes the lease and indexes for all; when it is killed another takes over", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() } });
    const url = await freshDatabase(pg);
    const first = await startReplica(sandbox, url, "a");
    scope.defer(() => first.kill());
    await first.stderr.waitFor(/(holds the shared store's lease)/, 10_000);
    const second = await startReplica(sandbox, url, "b");
    scope.defer(() => second.stop());
    await second.stderr.waitFor(/(another replica holds the shared store's lease)/, 10_000);
    // The holder's index reaches the store; the other one serves it too.
    const tools = await eventually(
      () => toolsIn(url),
      (names) => names.includes("fixture__echo"),
      20_000,
    );
    expect(tools.length).toBeGreaterThan(5);
    const client = await connectHttp(second.url);
    scope.defer(() => client.close());
    expect((await retrieve(client, "echo back the message")).tools[0]?.name).toBe("fixture__echo");

    const killedAt = Date.now();
    await first.kill();
    // It says it holds the lease now, not that a serve on its own data dir exited (issue 34, item 13).
    await second.stderr.waitFor(/(this replica holds the lease now)/, 15_000);
    process.stderr.write(`lease failover after SIGKILL: ${Date.now() - killedAt} ms\n`);
    expect(second.stderr.text()).toContain(
      "the replica that held the shared store's lease has stopped; this replica holds the lease now: it indexes servers for all",
    );
    expect(second.stderr.text()).not.toContain("has exited; this one keeps it now");
    expect(second.stderr.text()).not.toContain(`the index in ${second.dataDir}`);
    expect(
      (
        await client.callTool({
          name: "call_tool",
          arguments: { name: "fixture__echo", arguments: { message: "x" } },
        })
      ).content,
    ).toEqual([{ type: "text", text: "fixture echo: x" }]);
  });

  test("a server held for review is approved on another machine, and every replica honours it", async () => {
    const sandbox = scope.sandbox();
    heldConfig(sandbox);
    const url = await freshDatabase(pg);
    const replicas = [];
    for (const name of ["1", "2", "3"]) {
      const replica = await startReplica(sandbox, url, name);
      scope.defer(() => replica.stop());
      replicas.push(replica);
    }
    const third = await connectHttp(replicas[2]!.url);
    scope.defer(() => third.close());
    const refused = await third.callTool(echoCall("before"));
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain("held");

    // The person's command, on a machine of its own (its own data dir), against the store.
    const flags = ["--config", sandbox.configPath, "--data-dir", `${sandbox.dir}/operator`, "--store", url];
    const review = await eventually(
      () => runCli(["approve", ...flags], storeCommandEnv(sandbox)),
      (result) => result.stdout.includes("held"),
      20_000,
    );
    expect(review.code).toBe(0);
    const approved = await runCli(["approve", "held", ...flags], storeCommandEnv(sandbox));
    expect(approved.stderr).toBe("");
    expect(approved.code).toBe(0);
    const approvedAt = Date.now();
    const answer = await eventually(
      () => third.callTool(echoCall("after")),
      (result) => !result.isError,
      10_000,
    );
    process.stderr.write(
      `approval to replica 3's first answer honouring it: ${Date.now() - approvedAt} ms\n`,
    );
    expect(answer.content).toEqual([{ type: "text", text: "held echo: after" }]);
    for (const replica of replicas.slice(0, 2)) {
      const client = await connectHttp(replica.url);
      scope.defer(() => client.close());
      const result = await eventually(
        () => client.callTool(echoCall(replica.name)),
        (answer) => !answer.isError,
        5_000,
      );
      expect(JSON.stringify(result.content)).toBe(
        JSON.stringify([{ type: "text", text: `held echo: ${replica.name}` }]),
      );
    }
  });

  test("a tool that changes behind one replica is quarantined on every replica", async () => {
    const sandbox = scope.sandbox();
    const web = await startHttpFixture("web");
    scope.defer(() => web.stop());
    sandbox.writeConfig({ mcpServers: { web: { url: web.url } } });
    const url = await freshDatabase(pg);
    const clients: Awaited<ReturnType<typeof connectHttp>>[] = [];
    for (const name of ["1", "2", "3"]) {
      const replica = await startReplica(sandbox, url, name);
      scope.defer(() => replica.stop());
      const client = await connectHttp(replica.url);
      scope.defer(() => client.close());
      clients.push(client);
    }
    const echo = (client: (typeof clients)[number]) =>
      client.callTool({ name: "call_tool", arguments: { name: "web__echo", arguments: { message: "hi" } } });
    for (const client of clients)
      await eventually(
        () => echo(client),
        (result) => !result.isError,
        20_000,
      );
    // The server tells only the session that called it; the other replicas hear of it from the store.
    await clients[0]!.callTool({
      name: "call_tool",
      arguments: {
        name: "web__rewrite_tool",
        arguments: { tool_name: "echo", description: "Now something else" },
      },
    });
    const changedAt = Date.now();
    const refused = await eventually(
      () => echo(clients[2]!),
      (result) => Boolean(result.isError),
      10_000,
    );
    process.stderr.write(`tool change on replica 1 to replica 3 refusing it: ${Date.now() - changedAt} ms\n`);
    expect(JSON.stringify(refused.content)).toContain("web__echo is quarantined");
    // Replica 2 hears of it the same way, on its own time.
    const alsoRefused = await eventually(
      () => echo(clients[1]!),
      (result) => Boolean(result.isError),
      10_000,
    );
    expect(JSON.stringify(alsoRefused.content)).toContain("web__echo is quarantined");
  });

  test("PostgreSQL restarted: replicas keep answering from memory and catch up on what changed meanwhile", async () => {
    const sandbox = scope.sandbox();
    heldConfig(sandbox);
    const url = await freshDatabase(pg);
    const one = await startReplica(sandbox, url, "1");
    scope.defer(() => one.stop());
    const two = await startReplica(sandbox, url, "2");
    scope.defer(() => two.stop());
    const client = await connectHttp(two.url);
    scope.defer(() => client.close());
    await eventually(
      () => toolsIn(url),
      (names) => names.includes("held__echo"),
      20_000,
    );

    await pg.stop();
    try {
      // Searches and calls are answered while the store is down (the held server still held).
      expect(JSON.stringify(await retrieve(client, "echo back the message"))).toContain("awaitingApproval");
      expect((await client.callTool(echoCall("down"))).isError).toBe(true);
    } finally {
      await pg.start();
    }
    const flags = ["--config", sandbox.configPath, "--data-dir", `${sandbox.dir}/operator`, "--store", url];
    expect((await runCli(["approve", "held", ...flags], storeCommandEnv(sandbox))).code).toBe(0);
    const answer = await eventually(
      () => client.callTool(echoCall("back")),
      (result) => !result.isError,
      20_000,
    );
    expect(answer.content).toEqual([{ type: "text", text: "held echo: back" }]);
    expect(one.stderr.text()).not.toContain("ERROR");
  });
});
