import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createSandbox, eventually, fixtureEntry, freePort, runCli, type Sandbox } from "./helpers.ts";
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
 * `doctor --store` through the compiled binary against a real PostgreSQL: a good store passes (its
 * registry's servers are the ones started, not the file's), and a wrong or missing key, a pending
 * migration and an unreachable store are findings with what to do, never a crash.
 */
const hasPostgres = postgresBinDir() !== undefined;
if (!hasPostgres) process.stderr.write(POSTGRES_MISSING);

interface Finding {
  area: string;
  subject: string;
  status: "ok" | "warn" | "fail" | "info";
  detail: string;
  fix?: string;
}

let pg: TempPostgres;
const sandboxes: Sandbox[] = [];
/** Another machine: its config names a server of its own, which is not the team's. */
const operator = () => {
  const sandbox = createSandbox();
  sandbox.writeConfig({ mcpServers: { fileonly: { command: "mcpproxy-no-such-command" } } });
  sandboxes.push(sandbox);
  return sandbox;
};

async function doctor(url: string, env: Record<string, string> = {}, withKey = true) {
  const sandbox = operator();
  const base = withKey ? storeCommandEnv(sandbox) : sandbox.env();
  const result = await runCli(
    ["doctor", "--json", "--store", url, "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
    { ...base, ...env },
  );
  const parsed = JSON.parse(result.stdout) as { ok: boolean; findings: Finding[] };
  const of = (area: string, subject: string) =>
    parsed.findings.find((finding) => finding.area === area && finding.subject === subject);
  return { ...result, ...parsed, of };
}

beforeAll(async () => {
  if (hasPostgres) pg = await startTempPostgres();
});
afterAll(async () => {
  for (const sandbox of sandboxes) sandbox.cleanup();
  await pg?.cleanup();
});

describe.skipIf(!hasPostgres)("doctor --store", () => {
  let url: string;
  let replica: Replica;

  beforeAll(async () => {
    url = await freshDatabase(pg);
    const team = createSandbox();
    sandboxes.push(team);
    team.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    replica = await startReplica(team, url, "one");
    await eventually(
      () => onDatabase(url, async (sql) => (await sql`SELECT count(*)::int AS n FROM mcpproxy.tools`)[0]?.n),
      (count) => Number(count) > 0,
      15_000,
    );
  }, 60_000);
  afterAll(async () => {
    await replica?.stop();
  });

  test("passes on a good store, and checks the registry's servers rather than the file's", async () => {
    const checked = await doctor(url);
    expect(checked.stderr).toBe("");
    expect(checked.findings.filter((finding) => finding.status === "fail")).toEqual([]);
    expect(checked.code).toBe(0);
    expect(checked.ok).toBe(true);
    expect(checked.of("store", "connection")?.status).toBe("ok");
    expect(checked.of("store", "schema")?.detail).toContain("up to date");
    expect(checked.of("store", "key")?.status).toBe("ok");
    const replicas = checked.of("store", "replicas");
    expect(replicas?.status).toBe("ok");
    expect(replicas?.detail).toMatch(/^1 alive; the lease is held by \S+/);
    expect(checked.of("store", "catalog")?.status).toBe("ok");
    expect(checked.of("server", "fx")?.status).toBe("ok");
    expect(checked.of("server", "fileonly")).toBeUndefined();
  });

  test("never starts a server an agent put in the registry: it awaits a person's approval", async () => {
    const started = join(sandboxes[0]!.dir, "agent-server-started.log");
    const entry = {
      ...fixtureEntry({ args: ["--name", "planted"], env: { FIXTURE_START_LOG: started } }),
      agent: { change: "added", at: new Date().toISOString() },
    };
    // What upstream_servers on a replica writes for an agent's `add`.
    await onDatabase(
      url,
      (sql) =>
        sql`INSERT INTO mcpproxy.servers (name, entry, updated_by)
          VALUES ('planted', ${sql.json(entry)}, 'upstream_servers on a replica')`,
    );
    try {
      const checked = await doctor(url);
      expect(checked.of("server", "planted")).toMatchObject({ status: "warn" });
      expect(checked.of("server", "planted")?.detail).toContain("awaiting approval");
      expect(checked.of("server", "fx")?.status).toBe("ok");
      expect(existsSync(started)).toBe(false);
    } finally {
      await onDatabase(url, (sql) => sql`DELETE FROM mcpproxy.servers WHERE name = 'planted'`);
    }
  });

  test("reports a wrong key as a finding", async () => {
    const checked = await doctor(url, { MCPPROXY_STORE_KEY: randomBytes(32).toString("hex") });
    expect(checked.code).toBe(1);
    expect(checked.of("store", "key")).toMatchObject({ status: "fail" });
    expect(checked.of("store", "key")?.detail).toContain("not the key the store was set up with");
    // The rest is still checked.
    expect(checked.of("server", "fx")?.status).toBe("ok");
  });

  test("reports a missing key as a finding, not a crash", async () => {
    const checked = await doctor(url, {}, false);
    expect(checked.stderr).toBe("");
    expect(checked.code).toBe(1);
    expect(checked.of("store", "key")).toMatchObject({ status: "fail" });
    expect(checked.of("store", "key")?.detail).toContain("needs MCPPROXY_STORE_KEY");
  });
});

describe.skipIf(!hasPostgres)("doctor --store on a store that is not ready", () => {
  test("reports a pending migration, and checks no server it cannot know", async () => {
    const url = await freshDatabase(pg);
    const checked = await doctor(url);
    expect(checked.code).toBe(1);
    expect(checked.of("store", "connection")?.status).toBe("ok");
    const schema = checked.of("store", "schema");
    expect(schema).toMatchObject({ status: "fail" });
    expect(schema?.detail).toMatch(/version 0 of \d+: \d+ migration\(s\) pending/);
    expect(schema?.fix).toContain("mcpproxy store migrate");
    expect(checked.of("store", "replicas")?.status).toBe("warn");
    expect(checked.findings.filter((finding) => finding.area === "server")).toEqual([]);
    // doctor only looks: the store is still unmigrated.
    expect(
      await onDatabase(url, async (sql) => (await sql`SELECT to_regclass('mcpproxy.servers') AS t`)[0]?.t),
    ).toBeNull();
  });

  test("reports an unreachable store", async () => {
    const url = `postgres://mcpproxy@127.0.0.1:${await freePort()}/nowhere`;
    const checked = await doctor(url);
    expect(checked.stderr).toBe("");
    expect(checked.code).toBe(1);
    const connection = checked.of("store", "connection");
    expect(connection).toMatchObject({ status: "fail" });
    expect(connection?.detail).toContain("Cannot open the shared store");
    expect(checked.findings.filter((finding) => finding.area === "server")).toEqual([]);
  });
});
