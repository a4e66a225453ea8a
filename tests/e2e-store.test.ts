import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import type { Sql } from "../src/store/postgres/connect.ts";
import { recordChange } from "../src/store/postgres/store-changes.ts";
import { VERSION } from "../src/version.ts";
import { cleanupAfterEach, freePort, requireBinary, type Sandbox, startHttpProxy } from "./helpers.ts";
import { freshDatabase, onDatabase, passwordRole } from "./support/store-databases.ts";
import {
  POSTGRES_MISSING,
  postgresBinDir,
  startTempPostgres,
  type TempPostgres,
} from "./support/temp-postgres.ts";

setDefaultTimeout(90_000);

/**
 * The shared store's foundation through the compiled binary against a real PostgreSQL:
 * `mcpproxy store init|migrate|rekey|status`, migrations run once, the store key, the store setting,
 * and `serve --store` refusing what it cannot use with one clear line.
 */
const hasPostgres = postgresBinDir() !== undefined;
if (!hasPostgres) process.stderr.write(POSTGRES_MISSING);

const scope = cleanupAfterEach();
const KEY = randomBytes(32).toString("hex");
const PASSWORD = `pw-${randomBytes(6).toString("hex")}`;
let pg: TempPostgres;

beforeAll(async () => {
  if (!hasPostgres) return;
  pg = await startTempPostgres();
  await passwordRole(pg, "alice", PASSWORD);
});
afterAll(async () => {
  await pg?.cleanup();
});

function sandboxWith(config: unknown = { mcpServers: {} }): Sandbox {
  const sandbox = scope.sandbox();
  sandbox.writeConfig(config);
  return sandbox;
}

/** Runs the binary to its end (killed after `ms`, so a hang fails the test instead of stalling it). */
async function run(sandbox: Sandbox, args: string[], env: Record<string, string> = {}, ms = 30_000) {
  const started = performance.now();
  const child = Bun.spawn([requireBinary(), ...args], {
    env: sandbox.env({ MCPPROXY_STORE_KEY: KEY, ...env }),
    cwd: sandbox.dir,
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), ms);
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  clearTimeout(timer);
  return { code, stdout, stderr, ms: performance.now() - started };
}

const store = (sandbox: Sandbox, args: string[], env: Record<string, string> = {}) =>
  run(sandbox, ["store", ...args, "--config", sandbox.configPath], env);
const serve = (sandbox: Sandbox, args: string[], env: Record<string, string> = {}) =>
  run(sandbox, ["serve", "--transport", "http", "--port", "0", "--config", sandbox.configPath, ...args], env);
const withPassword = (url: string, user = "mcpproxy", password = PASSWORD) =>
  url.replace("//mcpproxy@", `//${user}:${password}@`);

async function migrationsOf(url: string) {
  return onDatabase(
    url,
    (sql) => sql<{ version: number }[]>`SELECT version FROM mcpproxy.schema_migrations ORDER BY 1`,
  );
}

describe.skipIf(!hasPostgres)("store migrate and status", () => {
  test("three processes migrating at once apply each step exactly once, and none prints an error", async () => {
    const url = await freshDatabase(pg);
    const sandbox = sandboxWith();
    const runs = await Promise.all([1, 2, 3].map(() => store(sandbox, ["migrate", "--store", url])));
    for (const result of runs) {
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
    }
    expect((await migrationsOf(url)).map((row) => row.version)).toEqual([1]);
    const outputs = runs.map((result) => result.stdout).sort();
    expect(outputs.filter((text) => text.includes("from version 0 to 1: applied 1"))).toHaveLength(1);
    expect(outputs.filter((text) => text.includes("is already at version 1."))).toHaveLength(2);
  });

  test("status says what is pending and exits 1 before migrating, 0 after; the URL's password is never shown", async () => {
    const url = withPassword(await freshDatabase(pg));
    const sandbox = sandboxWith();
    const before = await store(sandbox, ["status", "--store", url]);
    expect(before.code).toBe(1);
    expect(before.stdout).toContain("Schema: version 0 of 1, 1 step(s) pending (1 shared state of replicas)");
    expect(before.stdout).toContain("run `mcpproxy store migrate`");
    const json = JSON.parse((await store(sandbox, ["status", "--json", "--store", url])).stdout);
    expect(json).toMatchObject({ isUpToDate: false, schema: { current: 0, latest: 1 } });
    expect(json.schema.pending).toEqual([{ version: 1, name: "shared state of replicas" }]);
    const migrated = await store(sandbox, ["migrate", "--store", url]);
    expect(migrated.code).toBe(0);
    const after = await store(sandbox, ["status", "--store", url]);
    expect(after.code).toBe(0);
    expect(after.stdout).toContain("Schema: version 1 of 1 (up to date)");
    expect(after.stdout).toContain("Kept: 0 servers, 0 tools, 0 approvals, 0 changes");
    for (const result of [before, migrated, after]) {
      expect(result.stdout + result.stderr).not.toContain(PASSWORD);
      expect(result.stdout).toContain("postgres://mcpproxy:***@127.0.0.1");
    }
  });

  test("status shows the live and stale replicas, who holds the lease, counts, sizes and the last change", async () => {
    const url = await freshDatabase(pg);
    const sandbox = sandboxWith();
    const replica = await startHttpProxy(sandbox, ["--store", url], { MCPPROXY_STORE_KEY: KEY });
    scope.defer(() => replica.stop());
    // A replica that stopped beating an hour ago, and a change. The live replica holds the lease.
    await onDatabase(url, async (sql) => {
      await sql`INSERT INTO mcpproxy.replicas VALUES ('gone-1', 'elsewhere', 7, '0.0.1', now() - interval '2 hours', now() - interval '1 hour')`;
      await sql`INSERT INTO mcpproxy.servers (name, entry, updated_by) VALUES ('github', '{}', 'test')`;
      await sql.begin((tx) => recordChange(tx as unknown as Sql, "test", "server", { name: "github" }));
    });
    const result = await store(sandbox, ["status", "--json", "--store", url]);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    const live = report.replicas.find((r: { id: string }) => r.id !== "gone-1");
    expect(live).toMatchObject({ pid: replica.child.pid, version: VERSION, isAlive: true });
    expect(report.replicas.find((r: { id: string }) => r.id === "gone-1")).toMatchObject({ isAlive: false });
    expect(report.locks).toContainEqual(expect.objectContaining({ name: "lease", holder: live.id }));
    expect(report.counts).toEqual({ servers: 1, tools: 0, approvals: 0, changes: 1 });
    expect(report.lastChange).toMatchObject({ kind: "server" });
    expect(report.size.databaseBytes).toBeGreaterThan(report.size.schemaBytes);
    expect(Object.keys(report.size.tables)).toContain("changes");
    const text = (await store(sandbox, ["status", "--store", url])).stdout;
    expect(text).toContain("Replicas: 2 registered, 1 alive");
    expect(text).toContain("gone-1  elsewhere pid 7, 0.0.1");
    expect(text).toContain("(not alive: stopped or cut off)");
    expect(text).toContain(`Lease: held by ${live.id}`);
    expect(text).toContain(`Last change: #${report.lastChange.id} server`);
    // A replica that stops says goodbye: it leaves the list.
    await replica.stop();
    const after = JSON.parse((await store(sandbox, ["status", "--json", "--store", url])).stdout);
    expect(after.replicas.map((r: { id: string }) => r.id)).toEqual(["gone-1"]);
  });

  test("a store migrated by a newer mcpproxy is refused by store migrate and serve --store, and status says so", async () => {
    const url = await freshDatabase(pg);
    const sandbox = sandboxWith();
    expect((await store(sandbox, ["migrate", "--store", url])).code).toBe(0);
    await onDatabase(
      url,
      (sql) => sql`INSERT INTO mcpproxy.schema_migrations (version, name) VALUES (999, 'future')`,
    );
    const message =
      "The shared store is at schema version 999, newer than this mcpproxy knows (1): upgrade mcpproxy";
    for (const result of [
      await store(sandbox, ["migrate", "--store", url]),
      await serve(sandbox, ["--store", url]),
    ]) {
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(message);
    }
    const status = await store(sandbox, ["status", "--store", url]);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain(
      "Schema: version 999, newer than this mcpproxy knows (1): upgrade mcpproxy here.",
    );
    expect((await migrationsOf(url)).map((row) => row.version)).toEqual([1, 999]);
  });
});

describe.skipIf(!hasPostgres)("the store key", () => {
  test("a replica with another MCPPROXY_STORE_KEY, none, or a short one refuses to start, and says why", async () => {
    const url = await freshDatabase(pg);
    const sandbox = sandboxWith();
    const init = await store(sandbox, ["init", "--store", url]);
    expect(init.code).toBe(0);
    expect(init.stdout).toContain("is ready at schema version 1 (applied 1)");
    const cases = [
      [randomBytes(32).toString("hex"), "MCPPROXY_STORE_KEY is not the key the shared store was set up with"],
      ["", "A shared store needs MCPPROXY_STORE_KEY"],
      ["too-short", "MCPPROXY_STORE_KEY is too short"],
    ] as const;
    for (const [key, message] of cases) {
      const result = await serve(sandbox, ["--store", url], { MCPPROXY_STORE_KEY: key });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stderr).not.toContain("    at ");
    }
  });

  test("hex, base64 and passphrase keys are accepted; the same bytes in another form are the same key", async () => {
    const sandbox = sandboxWith();
    const bytes = randomBytes(32);
    const url = await freshDatabase(pg);
    expect(
      (await store(sandbox, ["init", "--store", url], { MCPPROXY_STORE_KEY: bytes.toString("hex") })).code,
    ).toBe(0);
    const again = await store(sandbox, ["init", "--store", url], {
      MCPPROXY_STORE_KEY: bytes.toString("base64"),
    });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("is ready at schema version 1;");
    const phraseUrl = await freshDatabase(pg);
    const phrase = "a passphrase that is long enough to be a key";
    expect((await store(sandbox, ["init", "--store", phraseUrl], { MCPPROXY_STORE_KEY: phrase })).code).toBe(
      0,
    );
    const other = await store(sandbox, ["init", "--store", phraseUrl], { MCPPROXY_STORE_KEY: `${phrase}.` });
    expect(other.code).toBe(2);
    expect(other.stderr).toContain("is not the key the shared store was set up with");
  });
});

describe.skipIf(!hasPostgres)("the store setting", () => {
  test("a password written in the config file is refused; ${VAR} is expanded; another scheme is refused", async () => {
    const url = await freshDatabase(pg);
    const literal = sandboxWith({ mcpServers: {}, mcpproxy: { store: withPassword(url, "alice") } });
    const refused = await store(literal, ["status"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("mcpproxy.store: holds a password written as it is");
    expect(refused.stderr).not.toContain(PASSWORD);
    // The role asks for its password: the status only works when ${ALICE_PASSWORD} was expanded.
    const variable = sandboxWith({
      mcpServers: {},
      mcpproxy: { store: withPassword(url, "alice", "${ALICE_PASSWORD}") },
    });
    const status = await store(variable, ["status"], { ALICE_PASSWORD: PASSWORD });
    expect(status.stderr).toBe("");
    expect(status.stdout).toContain("Schema: version 0 of 1");
    const mysql = sandboxWith({ mcpServers: {}, mcpproxy: { store: "mysql://alice@127.0.0.1/x" } });
    const wrongScheme = await store(mysql, ["status"]);
    expect(wrongScheme.code).toBe(2);
    expect(wrongScheme.stderr).toContain("must be a postgres://user@host:port/database URL");
    const flag = await store(sandboxWith(), ["status", "--store", "http://127.0.0.1/x"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("--store");
  });

  test("MCPPROXY_STORE names the store, --store wins over it, and without either the command says the three ways", async () => {
    const url = await freshDatabase(pg);
    const sandbox = sandboxWith();
    const fromEnv = await store(sandbox, ["migrate"], { MCPPROXY_STORE: url });
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stdout).toContain("from version 0 to 1");
    const closed = `postgres://mcpproxy@127.0.0.1:${await freePort()}/x`;
    const flagWins = await store(sandbox, ["status", "--store", url], { MCPPROXY_STORE: closed });
    expect(flagWins.code).toBe(0);
    const missing = await store(sandbox, ["status"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      "pass --store postgres://user@host:port/db, set MCPPROXY_STORE, or write mcpproxy.store",
    );
  });
});

describe.skipIf(!hasPostgres)("an unreachable store", () => {
  test("serve --store and store status fail at once with STORE_UNAVAILABLE in one line: closed port, wrong password, unknown user", async () => {
    const url = await freshDatabase(pg);
    const sandbox = sandboxWith();
    const cases = [
      [`postgres://alice:${PASSWORD}@127.0.0.1:${await freePort()}/x`, "ECONNREFUSED"],
      [withPassword(url, "alice", "Wrong-Pass-77"), 'password authentication failed for user "alice"'],
      [withPassword(url, "nobody", "Wrong-Pass-77"), 'role "nobody" does not exist'],
    ] as const;
    for (const [storeUrl, reason] of cases) {
      for (const args of [
        ["serve", "--transport", "http", "--port", "0", "--store", storeUrl],
        ["store", "status", "--store", storeUrl],
      ]) {
        const result = await run(sandbox, [...args, "--config", sandbox.configPath]);
        process.stderr.write(
          `${args[0]} against an unreachable store (${reason}): exit after ${result.ms.toFixed(0)} ms\n`,
        );
        expect(result.code).toBe(1);
        const lines = result.stderr.trim().split("\n");
        expect(lines.at(-1)).toStartWith("mcpproxy: Cannot open the shared store postgres://");
        expect(lines.at(-1)).toContain(reason);
        expect(lines.at(-1)).toContain("Check that PostgreSQL is running");
        expect(result.stderr).not.toContain("    at ");
        expect(result.stderr).not.toContain(PASSWORD);
        expect(result.stderr).not.toContain("Wrong-Pass-77");
      }
    }
  });

  test("a store that accepts the connection and never answers is given up after the connect timeout", async () => {
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {}, open() {} } });
    scope.defer(() => silent.stop(true));
    const sandbox = sandboxWith();
    const result = await serve(sandbox, ["--store", `postgres://alice@127.0.0.1:${silent.port}/x`]);
    process.stderr.write(`serve against a silent store: exit after ${result.ms.toFixed(0)} ms\n`);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Cannot open the shared store postgres://***@127.0.0.1");
    expect(result.stderr).toContain("no answer within 5 s");
  });
});

describe("store --help", () => {
  test("the command and each subcommand have their help; an unknown subcommand is a usage error", async () => {
    const sandbox = sandboxWith();
    const main = await run(sandbox, ["store", "--help"]);
    expect(main.code).toBe(0);
    expect(main.stdout).toStartWith(
      "Usage: mcpproxy store init|migrate|rekey|status [--store URL] [--json] [--config FILE]",
    );
    for (const [name, words] of [
      ["init", "Needs MCPPROXY_STORE_KEY"],
      ["migrate", "A store migrated by a newer mcpproxy is refused"],
      ["rekey", "with every replica stopped"],
      ["status", "Exits 1 when migrations are pending"],
    ] as const) {
      const help = await run(sandbox, ["store", name, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toStartWith(`Usage: mcpproxy store ${name} [--store URL]`);
      expect(help.stdout.replace(/\s+/g, " ")).toContain(words);
    }
    const unknown = await run(sandbox, ["store", "drop", "--config", sandbox.configPath]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      'mcpproxy: Unknown store command "drop": mcpproxy store init|migrate|rekey|status. Run `mcpproxy store --help`.\n',
    );
    expect((await run(sandbox, ["--help"])).stdout).toContain("store    Operate the shared store");
  });
});
