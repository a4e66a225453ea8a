#!/usr/bin/env bun
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
/**
 * The team deployment's figures (issue 26), in one run on this machine: requests per second and
 * p50/p99 of `call_tool` from 2026-07-28 clients through nginx with 1, 2 and 3 `serve --store`
 * replicas, against one replica alone without a store and with one (what the store and the
 * balancer cost: on 2 cores, more replicas share the same CPUs, so the point is overhead, not
 * scaling); the lease's failover after the holder is SIGKILLed and what calls saw meanwhile; how
 * long an approval takes to reach the last replica; memory per replica; the store's size for
 * 10,000 tools. Rounds of the set-ups are interleaved, so machine noise hits them alike.
 *
 *   bun bench/team-bench.ts [--clients N] [--calls N] [--rounds N]
 */
import { Client as ModernClient, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import postgres from "postgres";
import { createSandbox, fixtureEntry, runCli, type Sandbox, startHttpProxy } from "../tests/helpers.ts";
import { type Replica, startReplica, storeCommandEnv } from "../tests/support/replicas.ts";
import { freshDatabase } from "../tests/support/store-databases.ts";
import { startTeam, type Team } from "../tests/support/team.ts";
import { startTempPostgres, type TempPostgres } from "../tests/support/temp-postgres.ts";
import { loadEvalCatalog, requireEvalSet } from "./eval-catalog.ts";
import { percentile } from "./metrics.ts";

const { values } = parseArgs({
  options: {
    clients: { type: "string", default: "8" },
    calls: { type: "string", default: "50" },
    rounds: { type: "string", default: "3" },
  },
});
/** The public eval's tool definitions: realistic sizes for the store's size figure. */
const EVAL_PATH = requireEvalSet();
const CLIENTS = Number(values.clients);
const say = (line: string) => process.stdout.write(`${line}\n`);
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);

async function modernClient(url: URL): Promise<ModernClient> {
  const client = new ModernClient(
    { name: "team-bench", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

interface Setup {
  label: string;
  clients: ModernClient[];
  latencies: number[];
  wallMs: number;
  calls: number;
  failures: number;
}

async function round(setup: Setup): Promise<void> {
  const started = performance.now();
  await Promise.all(
    setup.clients.map(async (client, worker) => {
      for (let i = 0; i < CALLS; i++) {
        const nonce = `${worker}-${i}`;
        const t0 = performance.now();
        try {
          const answer = await client.callTool({
            name: "call_tool",
            arguments: { name: "fixture__echo", arguments: { message: nonce } },
          });
          if (answer.isError) setup.failures++;
        } catch {
          setup.failures++;
        }
        setup.latencies.push(performance.now() - t0);
      }
    }),
  );
  setup.wallMs += performance.now() - started;
  setup.calls += setup.clients.length * CALLS;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function clientsOf(url: URL): Promise<ModernClient[]> {
  return Promise.all(Array.from({ length: CLIENTS }, () => modernClient(url)));
}

const pg: TempPostgres = await startTempPostgres();
const sandboxes: Sandbox[] = [];
const stops: (() => Promise<unknown>)[] = [];
try {
  const sandbox = createSandbox();
  sandboxes.push(sandbox);
  sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() } });

  // --- throughput and latency -------------------------------------------------------------
  const alone = await startHttpProxy(sandbox);
  stops.push(() => alone.stop());
  const storeUrl = await freshDatabase(pg);
  const stored: Replica = await startReplica(sandbox, storeUrl, "alone");
  stops.push(() => stored.stop());
  const teams: Team[] = [];
  for (const replicas of [1, 2, 3]) {
    const team = await startTeam(sandbox, pg, { replicas });
    stops.push(() => team.stop());
    teams.push(team);
  }
  const setups: Setup[] = [
    { label: "one replica, no store, direct", clients: await clientsOf(alone.url) },
    { label: "one replica, store, direct", clients: await clientsOf(stored.url) },
    ...(await Promise.all(
      teams.map(async (team) => ({
        label: `nginx + ${team.replicas.length} replica${team.replicas.length > 1 ? "s" : ""}, store`,
        clients: await clientsOf(new URL("/mcp", team.nginx.url)),
      })),
    )),
  ].map((setup) => ({ ...setup, latencies: [], wallMs: 0, calls: 0, failures: 0 }));
  for (const setup of setups) await round({ ...setup, latencies: [], wallMs: 0, calls: 0, failures: 0 }); // warm-up
  for (let r = 0; r < ROUNDS; r++) for (const setup of setups) await round(setup);
  say(
    `\ncall_tool (echo) from ${CLIENTS} 2026-07-28 clients at once, ${CALLS} calls each, ${ROUNDS} interleaved rounds\n`,
  );
  say("| set-up | calls/s | p50 ms | p99 ms | failed |");
  say("|---|---|---|---|---|");
  for (const setup of setups) {
    const sorted = [...setup.latencies].sort((a, b) => a - b);
    say(
      `| ${setup.label} | ${((setup.calls / setup.wallMs) * 1000).toFixed(0)} | ${percentile(sorted, 50).toFixed(2)} | ${percentile(sorted, 99).toFixed(2)} | ${setup.failures} |`,
    );
  }
  const three = teams[2]!;
  say("\nmemory (RSS) after the load:");
  say(`  one replica, no store: ${rssMb(alone.child.pid).toFixed(0)} MB`);
  for (const replica of three.replicas)
    say(`  replica ${replica.name} of 3, store: ${rssMb(replica.child.pid).toFixed(0)} MB`);
  for (const setup of setups) await Promise.all(setup.clients.map((client) => client.close()));

  // --- an approval reaching every replica -------------------------------------------------
  const held = createSandbox();
  sandboxes.push(held);
  const heldNames = ["h1", "h2", "h3", "h4", "h5"];
  held.writeConfig({
    mcpServers: Object.fromEntries(
      heldNames.map((name) => [name, { ...fixtureEntry({ args: ["--name", name] }), quarantined: true }]),
    ),
  });
  const heldTeam = await startTeam(held, pg, { replicas: 3 });
  stops.push(() => heldTeam.stop());
  const direct = await Promise.all(heldTeam.replicas.map((replica) => modernClient(replica.url)));
  const propagation: number[] = [];
  for (const name of heldNames) {
    const flags = [
      "--config",
      held.configPath,
      "--data-dir",
      `${held.dir}/operator`,
      "--store",
      heldTeam.storeUrl,
    ];
    // Wait until the store knows the server's tools (the lease holder indexed it).
    for (let i = 0; i < 200; i++) {
      const review = await runCli(["approve", ...flags], storeCommandEnv(held));
      if (review.stdout.includes(name)) break;
      await Bun.sleep(100);
    }
    const approved = await runCli(["approve", name, ...flags], storeCommandEnv(held));
    if (approved.code !== 0) throw new Error(`approve ${name}: ${approved.stderr}`);
    const at = performance.now();
    const honouredAt = await Promise.all(
      direct.map(async (client) => {
        for (;;) {
          const answer = await client.callTool({
            name: "call_tool",
            arguments: { name: `${name}__echo`, arguments: { message: "x" } },
          });
          if (!answer.isError) return performance.now();
          await Bun.sleep(5);
        }
      }),
    );
    propagation.push(Math.max(...honouredAt) - at);
  }
  await Promise.all(direct.map((client) => client.close()));
  const sortedPropagation = [...propagation].sort((a, b) => a - b);
  say(
    `\napproval (\`mcpproxy approve --store\` exits) to the last of 3 replicas honouring it, ${propagation.length} approvals: ` +
      `p50 ${percentile(sortedPropagation, 50).toFixed(0)} ms, max ${Math.max(...propagation).toFixed(0)} ms`,
  );

  // --- failover ---------------------------------------------------------------------------
  const holder = three.replicas.find((replica) =>
    replica.stderr.text().includes("this replica holds the shared store's lease"),
  );
  if (holder) {
    const clients = await clientsOf(new URL("/mcp", three.nginx.url));
    let failed = 0;
    let ok = 0;
    let running = true;
    const load = Promise.all(
      clients.map(async (client) => {
        while (running) {
          try {
            const answer = await client.callTool({
              name: "call_tool",
              arguments: { name: "fixture__echo", arguments: { message: "f" } },
            });
            if (answer.isError) failed++;
            else ok++;
          } catch {
            failed++;
          }
        }
      }),
    );
    await Bun.sleep(500);
    const killedAt = performance.now();
    await holder.kill();
    const others = three.replicas.filter((replica) => replica !== holder);
    let tookOver = Number.NaN;
    for (let i = 0; i < 6000 && Number.isNaN(tookOver); i++) {
      if (others.some((replica) => replica.stderr.text().includes("keeps it now")))
        tookOver = performance.now() - killedAt;
      else await Bun.sleep(5);
    }
    await Bun.sleep(1000);
    running = false;
    await load;
    await Promise.all(clients.map((client) => client.close()));
    say(
      `\nfailover: the lease holder SIGKILLed under load from ${CLIENTS} clients; another replica took the lease ` +
        `(and started indexing) after ${tookOver.toFixed(0)} ms; calls meanwhile: ${ok} answered, ${failed} failed ` +
        "(those in flight on the dead replica)",
    );
  }

  // --- the store's size -------------------------------------------------------------------
  const sizeUrl = await freshDatabase(pg);
  const sizer = await startReplica(sandbox, sizeUrl, "sizer");
  await sizer.stop();
  const sql = postgres(sizeUrl, { max: 1, onnotice: () => {} });
  const tools = loadEvalCatalog(EVAL_PATH).tools;
  for (let i = 0; i < 10_000; i += 500) {
    const rows = Array.from({ length: Math.min(500, 10_000 - i) }, (_, j) => {
      const tool = tools[(i + j) % tools.length]!;
      const definition = JSON.stringify(tool);
      return {
        server: `server${Math.floor((i + j) / 20)}`,
        tool: `${tool.name}_${i + j}`,
        name: `server${Math.floor((i + j) / 20)}__tool_${i + j}`,
        hash: Bun.hash(definition).toString(16),
        definition,
        updated_at: Date.now(),
      };
    });
    await sql`INSERT INTO mcpproxy.tools ${sql(rows)}`;
    await sql`INSERT INTO mcpproxy.approvals ${sql(rows.map((row) => ({ server: row.server, tool: row.tool, hash: row.hash, definition: null, approved_at: row.updated_at })))}`;
  }
  const [size] = await sql<{ tools: string; approvals: string; database: string }[]>`
    SELECT pg_total_relation_size('mcpproxy.tools') AS tools, pg_total_relation_size('mcpproxy.approvals') AS approvals,
      pg_database_size(current_database()) AS database`;
  await sql.end();
  const mb = (bytes: string | undefined) => (Number(bytes) / 1024 / 1024).toFixed(1);
  say(
    `\nthe store with 10,000 tools (eval definitions) and their approvals: tools ${mb(size?.tools)} MB, ` +
      `approvals ${mb(size?.approvals)} MB, the whole database ${mb(size?.database)} MB`,
  );
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => {});
  for (const sandbox of sandboxes) sandbox.cleanup();
  await pg.cleanup();
}
