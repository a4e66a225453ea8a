import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  cleanupAfterEach,
  connectStdio,
  eventually,
  FIXTURE_TOOLS,
  fixtureEntry,
  requireBinary,
  retrieve,
  runCli,
  runProcess,
  type Sandbox,
} from "./helpers.ts";

/**
 * Several mcpproxy processes on one data dir: one writer at a time, taken atomically (also over a
 * lock its holder left by dying); a second serve answers its own client, leaves the index to the
 * first and keeps it once the first exits; `index` beside a serve has the serve re-index; a
 * read-only data dir can still be searched.
 */
setDefaultTimeout(240_000);
const cleanup = cleanupAfterEach();
const flags = (sandbox: Sandbox) => ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];

/** A pid that names no process: one that has just exited. */
function deadPid(): number {
  const child = Bun.spawnSync(["true"]);
  return child.pid;
}

async function searchJson(
  sandbox: Sandbox,
  query: string,
  extra: string[] = [],
): Promise<{ tools: { name: string }[] }> {
  const result = await runCli(
    ["search", query, "--json", "--top-k", "10", ...extra, ...flags(sandbox)],
    sandbox.env(),
  );
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout);
}

async function rewriteEcho(client: Client, description: string): Promise<void> {
  const result = await client.callTool({
    name: "call_tool",
    arguments: { name: "fx__rewrite_tool", arguments: { tool_name: "echo", description } },
  });
  expect(result.isError).toBeFalsy();
}

describe("one writer per data dir", () => {
  test("concurrent index runs over a stale writer lock: never two writers at once, in every round", async () => {
    const sandbox = cleanup.sandbox();
    const marker = join(sandbox.dir, "running");
    // The server holds a marker while it runs: two writers at once would both run it.
    sandbox.writeConfig({
      mcpServers: {
        fx: fixtureEntry({ args: ["--init-delay", "300"], env: { FIXTURE_EXCLUSIVE: marker } }),
      },
    });
    expect((await runCli(["index", ...flags(sandbox)], sandbox.env())).code).toBe(0);

    // A lock left the real way: an index killed while it writes.
    const killed = Bun.spawn([requireBinary(), "index", ...flags(sandbox)], {
      env: sandbox.env(),
      stdout: "ignore",
      stderr: "ignore",
    });
    await eventually(
      () => existsSync(marker),
      (running) => running,
      15_000,
    );
    killed.kill("SIGKILL");
    await killed.exited;
    await eventually(
      () => existsSync(marker),
      (running) => !running,
      15_000,
    );

    // Eight rounds catch a lock that lets two writers in (each round is a fresh race); a longer soak
    // adds minutes to every run of the suite and little else.
    const ROUNDS = 8;
    const RUNS = 3;
    const waited: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // From the second round on, the lock file of a writer that died, as it finds it.
      if (round > 0) writeFileSync(join(sandbox.dataDir, "writer.lock"), `${deadPid()}\n`);
      const runs = await Promise.all(
        Array.from({ length: RUNS }, () => runCli(["index", ...flags(sandbox)], sandbox.env())),
      );
      const overlaps = existsSync(`${marker}.overlaps`) ? readFileSync(`${marker}.overlaps`, "utf8") : "";
      expect({ round, overlaps }).toEqual({ round, overlaps: "" });
      // Every run indexed (one at a time): the others waited instead of failing.
      expect(runs.map((run) => run.code)).toEqual(Array(RUNS).fill(0));
      for (const run of runs) expect(run.stdout).toContain(`${FIXTURE_TOOLS} tools`);
      waited.push(runs.filter((run) => run.stderr.includes("Waiting for")).length);
    }
    // The runs of a round overlap (the server takes 300 ms to start): many rounds saw a run wait.
    expect(waited.filter((n) => n > 0).length).toBeGreaterThan(ROUNDS / 4);
  });

  test("a second serve answers its own client, leaves the index to the first, and keeps it once the first exits", async () => {
    const sandbox = cleanup.sandbox();
    // trust auto: a rewritten tool is searchable at once.
    sandbox.writeConfig({ mcpServers: { fx: { ...fixtureEntry(), trust: "auto" } } });
    const first = await connectStdio(sandbox);
    cleanup.defer(() => first.close());
    expect((await retrieve(first.client, "echo back the message", 1)).tools[0]?.name).toBe("fx__echo");

    const second = await connectStdio(sandbox);
    cleanup.defer(() => second.close());
    expect((await retrieve(second.client, "echo back the message", 1)).tools[0]?.name).toBe("fx__echo");
    expect(second.stderr()).toContain(`keeps the index in ${sandbox.dataDir}`);

    // The second one's own servers: what they change, its client finds; the saved index is the first's.
    await rewriteEcho(second.client, "Repeat the zebra words back");
    const own = await eventually(
      async () => (await retrieve(second.client, "repeat zebra words", 1)).tools[0]?.name,
      (name) => name === "fx__echo",
      10_000,
    );
    expect(own).toBe("fx__echo");
    expect((await searchJson(sandbox, "zebra")).tools.map((tool) => tool.name)).not.toContain("fx__echo");

    await first.close();
    // Once the first has gone, the second writes its view and keeps the index from then on.
    const taken = await eventually(
      async () => (await searchJson(sandbox, "zebra")).tools.map((tool) => tool.name),
      (names) => names.includes("fx__echo"),
      20_000,
    );
    expect(taken).toContain("fx__echo");
    await rewriteEcho(second.client, "Repeat the giraffe words back");
    const kept = await eventually(
      async () => (await searchJson(sandbox, "giraffe")).tools.map((tool) => tool.name),
      (names) => names.includes("fx__echo"),
      20_000,
    );
    expect(kept).toContain("fx__echo");
    expect(second.stderr()).toContain("has exited; this one keeps it now");
    // Its call statistics too: the call it counted in memory before, and the one since, are saved.
    const rewrites = async () => {
      const report = JSON.parse(
        (await runCli(["stats", "--json", ...flags(sandbox)], sandbox.env())).stdout,
      ) as {
        top: { server: string; tool: string; calls: number }[];
      };
      return report.top.find((tool) => tool.server === "fx" && tool.tool === "rewrite_tool")?.calls;
    };
    expect(await eventually(rewrites, (calls) => calls === 2, 10_000)).toBe(2);
    // And it answers index requests now.
    const indexed = await runCli(["index", ...flags(sandbox)], sandbox.env());
    expect(indexed.stdout).toContain(`keeps the index in ${sandbox.dataDir}; it re-indexed`);
    expect(indexed.code).toBe(0);
  });
});

describe("index while a serve keeps the data dir", () => {
  test("the serve re-indexes its servers (lazy ones too) and index prints its summary", async () => {
    const sandbox = cleanup.sandbox();
    // Indexed once, then reworded: a serve leaves a lazy server it knows tools of until a call needs it.
    const lazy = (description: string) => ({
      ...fixtureEntry({ args: ["--name", "lazyfx"], env: { FIXTURE_ECHO_DESCRIPTION: description } }),
      lazy: true,
      trust: "auto",
    });
    sandbox.writeConfig({ mcpServers: { lz: lazy("Say what the budgie says") } });
    expect((await runCli(["index", ...flags(sandbox)], sandbox.env())).code).toBe(0);
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry(), lz: lazy("Repeat what the parrot squawks") } });
    const serve = await connectStdio(sandbox);
    cleanup.defer(() => serve.close());
    const first = await eventually(
      async () => (await retrieve(serve.client, "echo back the message", 1)).tools[0]?.name,
      (name) => name === "fx__echo",
      10_000,
    );
    expect(first).toBe("fx__echo");
    // By its words: the encoder could place "budgie" near "parrot" before the re-index.
    const parrot = async () =>
      (await searchJson(sandbox, "parrot squawks", ["--mode", "lexical"])).tools.map((tool) => tool.name);
    expect(await parrot()).not.toContain("lz__echo");

    const indexed = await runCli(["index", ...flags(sandbox)], sandbox.env());
    expect(indexed.stdout).toMatch(/mcpproxy serve \(pid \d+\) keeps the index in/);
    expect(indexed.stdout).toContain(`ok      lz: ${FIXTURE_TOOLS} tools`);
    expect(indexed.stdout).toContain(`ok      fx: ${FIXTURE_TOOLS} tools`);
    expect(indexed.code).toBe(0);
    expect(await parrot()).toContain("lz__echo");
    // Nothing of the exchange is left in the data dir.
    expect(readdirSync(sandbox.dataDir).filter((name) => name.startsWith("index-"))).toEqual([]);

    const forced = await runCli(["index", "--force", ...flags(sandbox)], sandbox.env());
    expect(forced.code).toBe(1);
    expect(forced.stderr).toContain("needs the data dir to itself");
  });
});

describe("a read-only data dir", () => {
  /**
   * Runs a command unable to write where the file modes say no. As root, mode bits do not stop
   * writes, so the command runs without the capabilities that bypass them (setpriv).
   */
  function readOnlyRunner(): ((argv: string[]) => string[]) | undefined {
    if (process.getuid?.() !== 0) return (argv) => argv;
    const caps = "-dac_override,-dac_read_search,-fowner";
    const wrap = (argv: string[]) => [
      "setpriv",
      `--bounding-set=${caps}`,
      `--inh-caps=${caps}`,
      "--",
      ...argv,
    ];
    return Bun.spawnSync(wrap(["true"])).success ? wrap : undefined;
  }
  const runner = readOnlyRunner();
  if (!runner) {
    process.stderr.write(
      "skipping the read-only data dir test: running as root without setpriv, file modes cannot stop writes here\n",
    );
  }

  test.skipIf(!runner)("search answers from a data dir it cannot write", async () => {
    const sandbox = cleanup.sandbox();
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    expect((await runCli(["index", ...flags(sandbox)], sandbox.env())).code).toBe(0);
    const before = readdirSync(sandbox.dataDir).sort();
    for (const name of before) chmodSync(join(sandbox.dataDir, name), 0o400);
    chmodSync(sandbox.dataDir, 0o500);
    cleanup.defer(() => chmodSync(sandbox.dataDir, 0o700));
    const wrap = runner!;
    // The wrapper does stop writes here.
    const probe = await runProcess(wrap(["touch", join(sandbox.dataDir, "probe")]), sandbox.env());
    expect(probe.code).not.toBe(0);

    const searched = await runProcess(
      wrap([requireBinary(), "search", "echo back the message", "--json", ...flags(sandbox)]),
      sandbox.env(),
    );
    expect(searched.stderr).toBe("");
    expect(searched.code).toBe(0);
    expect(JSON.parse(searched.stdout).tools[0].name).toBe("fx__echo");
    expect(readdirSync(sandbox.dataDir).sort()).toEqual(before);
  });
});
