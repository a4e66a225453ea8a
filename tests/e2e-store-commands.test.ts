import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSandbox, eventually, FIXTURE_TOOLS, fixtureEntry, runCli, type Sandbox } from "./helpers.ts";
import { type Replica, startReplica, storeCommandEnv } from "./support/replicas.ts";
import { freshDatabase, onDatabase } from "./support/store-databases.ts";
import {
  POSTGRES_MISSING,
  postgresBinDir,
  startTempPostgres,
  type TempPostgres,
} from "./support/temp-postgres.ts";

setDefaultTimeout(90_000);

/**
 * `search`, `tools` and `index` with `--store`, through the compiled binary against a real
 * PostgreSQL and a real replica: the reading commands answer from the store's catalog and registry
 * (from a machine whose data dir and config never saw the servers) and write nothing to the store;
 * `index --store` has the lease holder re-index and prints its summary.
 */
const hasPostgres = postgresBinDir() !== undefined;
if (!hasPostgres) process.stderr.write(POSTGRES_MISSING);

let pg: TempPostgres;
const sandboxes: Sandbox[] = [];
const newSandbox = (config: unknown) => {
  const sandbox = createSandbox();
  sandbox.writeConfig(config);
  sandboxes.push(sandbox);
  return sandbox;
};

beforeAll(async () => {
  if (hasPostgres) pg = await startTempPostgres();
});
afterAll(async () => {
  for (const sandbox of sandboxes) sandbox.cleanup();
  await pg?.cleanup();
});

/** A lazy server: a serve leaves it unstarted while the catalog knows its tools; `index` starts it. */
const lazy = (description: string) => ({
  ...fixtureEntry({ args: ["--name", "lazyfx"], env: { FIXTURE_ECHO_DESCRIPTION: description } }),
  lazy: true,
  trust: "auto",
});

/**
 * The store's change log, whole, and what a read could have touched (the key's check value and
 * secrets, the registry, the catalog): a command that only reads leaves them exactly as they were.
 */
const storeState = (url: string) =>
  onDatabase(url, async (sql) =>
    JSON.stringify([
      await sql`SELECT id, kind, subject, origin FROM mcpproxy.changes ORDER BY id`,
      await sql`SELECT key, value FROM mcpproxy.meta ORDER BY key`,
      await sql`SELECT name, entry, updated_at FROM mcpproxy.servers ORDER BY name`,
      await sql`SELECT server, tool, name, hash, updated_at FROM mcpproxy.tools ORDER BY server, tool`,
      await sql`SELECT server, tool, hash, approved_at FROM mcpproxy.approvals ORDER BY server, tool`,
    ]),
  );
const storedDefinition = (url: string, server: string, tool: string) =>
  onDatabase(url, async (sql) => {
    const [row] = await sql<{ definition: string }[]>`
      SELECT definition FROM mcpproxy.tools WHERE server = ${server} AND tool = ${tool}`;
    return row?.definition;
  });

describe.skipIf(!hasPostgres)("search, tools and index against the shared store", () => {
  let url: string;
  let replica: Replica;
  /** Another machine: its config has no servers, its data dir holds nothing. */
  let other: Sandbox;
  const cli = (args: string[]) =>
    runCli(
      [...args, "--store", url, "--config", other.configPath, "--data-dir", other.dataDir],
      storeCommandEnv(other),
    );

  beforeAll(async () => {
    url = await freshDatabase(pg);
    const team = newSandbox({ mcpServers: { fx: fixtureEntry(), lz: lazy("Say what the budgie says") } });
    // The replica's data dir was indexed on one machine (lz saying "budgie"); the store starts from it.
    const dataDir = join(team.dir, "replica-one");
    const indexed = await runCli(["index", "--config", team.configPath, "--data-dir", dataDir], team.env());
    expect(indexed.code).toBe(0);
    // Now lz says "parrot", but the replica leaves a lazy server it knows tools of unstarted.
    team.writeConfig({ mcpServers: { fx: fixtureEntry(), lz: lazy("Repeat what the parrot squawks") } });
    replica = await startReplica(team, url, "one");
    const pushed = await eventually(
      () => storedDefinition(url, "fx", "echo"),
      (definition) => definition !== undefined,
      15_000,
    );
    expect(pushed).toBeDefined();
    expect(replica.stderr.text()).toContain("this replica holds the shared store's lease");
    other = newSandbox({ mcpServers: {} });
  }, 90_000);
  afterAll(async () => {
    await replica?.stop();
  });

  test("search --store finds the store's tools from a data dir that never saw the server, and writes nothing", async () => {
    const before = await storeState(url);
    const found = await cli(["search", "echo back the message", "--json"]);
    expect(found.stderr).toBe("");
    expect(found.code).toBe(0);
    expect((JSON.parse(found.stdout) as { tools: { name: string }[] }).tools[0]?.name).toBe("fx__echo");
    const text = await cli(["search", "budgie says"]);
    expect(text.stdout).toContain("lz__echo");
    expect(await storeState(url)).toBe(before);
    // The person's own data dir is left alone: the store's catalog was read from a copy of the moment.
    expect(existsSync(other.dataDir)).toBe(false);
    // Without --store the same command answers from that data dir, which knows nothing.
    const local = await runCli(
      [
        "search",
        "echo back the message",
        "--json",
        "--config",
        other.configPath,
        "--data-dir",
        other.dataDir,
      ],
      other.env(),
    );
    expect((JSON.parse(local.stdout) as { tools: unknown[] }).tools).toEqual([]);
  });

  test("stats --store counts the registry's servers and the store's tools, not the file's or the data dir's (issue 34, item 13)", async () => {
    const before = await storeState(url);
    const json = await cli(["stats", "--json"]);
    expect(json.stderr).toBe("");
    expect(json.code).toBe(0);
    const { totals } = JSON.parse(json.stdout) as { totals: { servers: number; indexedTools: number } };
    // The other machine's config has no servers and its data dir nothing: these are the team's.
    expect(totals).toMatchObject({ servers: 2, indexedTools: 2 * FIXTURE_TOOLS });
    const text = await cli(["stats"]);
    expect(text.stdout).toContain(`(${2 * FIXTURE_TOOLS} indexed on 2 servers)`);
    // A server of the registry is known by name, and one of neither is named as missing from it.
    expect((await cli(["stats", "--server", "lz"])).code).toBe(0);
    const unknown = await cli(["stats", "--server", "nope"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("No server named nope: it is not in the shared store's registry");
    expect(unknown.stderr).toContain("Known servers: fx, lz.");
    expect(await storeState(url)).toBe(before);
  });

  test("tools --store lists the store's tools by server, and writes nothing", async () => {
    const before = await storeState(url);
    const listed = await cli(["tools"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`fx (${FIXTURE_TOOLS} tools)`);
    expect(listed.stdout).toContain(`lz (${FIXTURE_TOOLS} tools)`);
    expect(listed.stdout).toContain(`${2 * FIXTURE_TOOLS} tools`);
    const one = JSON.parse((await cli(["tools", "fx", "--json"])).stdout) as { tools: { name: string }[] };
    expect(one.tools.map((tool) => tool.name)).toContain("fx__echo");
    expect(one.tools.every((tool) => tool.name.startsWith("fx__"))).toBe(true);
    expect(await storeState(url)).toBe(before);
    expect(existsSync(other.dataDir)).toBe(false);
  });

  test("index --store has the lease holder re-index (a lazy server's new tools reach the store) and prints its summary", async () => {
    expect(await storedDefinition(url, "lz", "echo")).toContain("budgie");
    // By its words: the encoder could place "budgie" near "parrot" before the re-index.
    const parrot = async () =>
      (await cli(["search", "parrot squawks", "--json", "--mode", "lexical"])).stdout;
    expect(await parrot()).not.toContain("lz__echo");
    const indexed = await cli(["index"]);
    expect(indexed.stderr).toBe("");
    expect(indexed.code).toBe(0);
    expect(indexed.stdout).toMatch(/Replica \S+ holds the lease of the shared store .*; it re-indexed/);
    expect(indexed.stdout).toContain(`ok      lz: ${FIXTURE_TOOLS} tools`);
    expect(indexed.stdout).toContain(`ok      fx: ${FIXTURE_TOOLS} tools`);
    // Answered once the store holds what the pass wrote: no waiting needed here.
    expect(await storedDefinition(url, "lz", "echo")).toContain("parrot");
    expect(replica.stderr.text()).toContain("`mcpproxy index --store` asked");
    expect(await parrot()).toContain("lz__echo");
  });

  test("index --store --force is refused: the shared catalog holds every replica's approvals", async () => {
    const forced = await cli(["index", "--force"]);
    expect(forced.code).toBe(2);
    expect(forced.stderr).toContain("--force (or MCPPROXY_RESET_DATA) is refused with a shared store");
  });
});

describe.skipIf(!hasPostgres)("index --store without a replica", () => {
  test("says that no replica holds the lease and exits 1", async () => {
    const url = await freshDatabase(pg);
    const sandbox = newSandbox({ mcpServers: { fx: fixtureEntry() } });
    const env = storeCommandEnv(sandbox);
    expect((await runCli(["store", "init", "--store", url, "--config", sandbox.configPath], env)).code).toBe(
      0,
    );
    const indexed = await runCli(
      ["index", "--store", url, "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
      env,
    );
    expect(indexed.code).toBe(1);
    expect(indexed.stderr).toContain("No replica of the shared store");
    expect(indexed.stderr).toContain("holds its lease, so none can index");
    expect(indexed.stdout).toBe("");
  });
});

describe.skipIf(!hasPostgres)("index --store when the lease holder dies while re-indexing", () => {
  test("says the replica stopped holding the lease before it finished, and exits 1", async () => {
    const url = await freshDatabase(pg);
    const sandboxDir = mkdtempSync(join(tmpdir(), "mcpproxy-slow-"));
    // A server that takes 30 s to answer: the pass the command asks for is still running when the replica dies.
    const sandbox = newSandbox({
      mcpServers: {
        slow: {
          ...fixtureEntry({
            args: ["--init-delay", "30000"],
            env: { FIXTURE_START_LOG: join(sandboxDir, "slow-started.log") },
            timeoutMs: 60_000,
          }),
          trust: "auto",
        },
      },
    });
    const replica = await startReplica(sandbox, url, "dying");
    try {
      const asking = runCli(
        [
          "index",
          "--store",
          url,
          "--config",
          sandbox.configPath,
          "--data-dir",
          join(sandbox.dir, "elsewhere"),
        ],
        storeCommandEnv(sandbox),
      );
      await replica.stderr.waitFor(/(`mcpproxy index --store` asked)/, 20_000);
      await replica.kill();
      const indexed = await asking;
      expect(indexed.code).toBe(1);
      expect(indexed.stderr).toContain("stopped holding the lease before it finished");
      expect(indexed.stdout).toBe("");
    } finally {
      await replica.kill();
      // A SIGKILLed replica cannot stop its servers: the one still starting is stopped here.
      for (const pid of readFileSync(join(sandboxDir, "slow-started.log"), "utf8")
        .split("\n")
        .filter(Boolean))
        try {
          process.kill(Number(pid), "SIGKILL");
        } catch {}
      rmSync(sandboxDir, { recursive: true, force: true });
    }
  });
});
