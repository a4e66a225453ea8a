#!/usr/bin/env bun
import { parseArgs } from "node:util";
import { createSandbox, eventually, fixtureEntry, runCli } from "../tests/helpers.ts";
import { startReplica, storeCommandEnv } from "../tests/support/replicas.ts";
import { freshDatabase, onDatabase } from "../tests/support/store-databases.ts";
import { startTempPostgres } from "../tests/support/temp-postgres.ts";

/**
 * What `--store` costs the commands that read the catalog and ask for an index: one replica of the
 * compiled binary serves a fixture with N generated tools from a temporary PostgreSQL; then, from
 * another machine's sandbox, `search --store` and `tools --store` (a snapshot of the store's
 * catalog pulled each run) are timed against `search` on the replica's own data dir, and
 * `index --store` (the lease holder re-indexes every server and answers) end to end. Median of
 * `--runs` runs of the whole process each. Needs `npm run build` first.
 *
 *   bun bench/store-commands-bench.ts [--tools 2000] [--runs 5]
 */
const { values } = parseArgs({
  options: { tools: { type: "string", default: "2000" }, runs: { type: "string", default: "5" } },
});
const toolCount = Number(values.tools);
const runs = Number(values.runs);

const pg = await startTempPostgres();
const team = createSandbox();
const other = createSandbox();
try {
  const url = await freshDatabase(pg);
  team.writeConfig({ mcpServers: { many: fixtureEntry({ args: ["--many-tools", String(toolCount)] }) } });
  other.writeConfig({ mcpServers: {} });
  const replica = await startReplica(team, url, "one");
  try {
    const stored = await eventually(
      () =>
        onDatabase(url, async (sql) => (await sql`SELECT count(*)::int AS n FROM mcpproxy.tools`)[0]?.n ?? 0),
      (count) => count >= toolCount,
      120_000,
    );
    const remote = ["--store", url, "--config", other.configPath, "--data-dir", other.dataDir];
    const local = ["--config", team.configPath, "--data-dir", replica.dataDir];
    const timed = async (label: string, args: string[], env: Record<string, string>) => {
      const times: number[] = [];
      for (let i = 0; i < runs; i++) {
        const started = performance.now();
        const result = await runCli(args, env);
        times.push(performance.now() - started);
        if (result.code !== 0) throw new Error(`${label} exited ${result.code}: ${result.stderr}`);
      }
      times.sort((a, b) => a - b);
      const median = times[Math.floor(times.length / 2)] ?? 0;
      process.stdout.write(
        `${label.padEnd(40)} median ${median.toFixed(0)} ms (min ${times[0]?.toFixed(0)} ms)\n`,
      );
    };
    process.stdout.write(`${stored} tools in the store; ${runs} runs each\n`);
    await timed("search (the replica's data dir)", ["search", "generated tool 42", ...local], team.env());
    await timed("search --store", ["search", "generated tool 42", ...remote], storeCommandEnv(other));
    await timed("tools --store", ["tools", ...remote], storeCommandEnv(other));
    await timed("index --store (lease holder re-indexes)", ["index", ...remote], storeCommandEnv(other));
  } finally {
    await replica.stop();
  }
} finally {
  team.cleanup();
  other.cleanup();
  await pg.cleanup();
}
