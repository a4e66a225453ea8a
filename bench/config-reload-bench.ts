#!/usr/bin/env bun
/**
 * How long a hand edit of the config takes to reach search: `mcpproxy serve` runs (stdio) with one
 * fixture server; a second is added by writing the config file, and retrieve_tools is asked every
 * 10 ms until it finds the new server's tool. Repeated with a fresh name each time; figures, not
 * pass/fail.
 *
 *   bun bench/config-reload-bench.ts [--rounds 5]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { FIXTURE } from "../tests/helpers.ts";
import { percentile } from "./metrics.ts";
import { benchEnv, startProxyStdio } from "./proxy-process.ts";

export async function measureConfigReload(rounds = 5) {
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-reload-"));
  const configPath = join(work, "config.json");
  const entry = (name: string) => ({ command: process.execPath, args: [FIXTURE, "--name", name] });
  writeFileSync(configPath, JSON.stringify({ mcpServers: { first: entry("first") } }, null, 2));
  const proxy = await startProxyStdio(configPath, join(work, "data"), benchEnv(join(work, "home")));
  const times: number[] = [];
  try {
    await proxy.client.callTool({ name: "retrieve_tools", arguments: { query: "warm up" } });
    for (let round = 0; round < rounds; round++) {
      const name = `added${round}`;
      const config = JSON.parse(readFileSync(configPath, "utf8")) as { mcpServers: Record<string, unknown> };
      config.mcpServers[name] = entry(name);
      const started = performance.now();
      writeFileSync(configPath, JSON.stringify(config, null, 2));
      for (;;) {
        const result = (await proxy.client.callTool({
          name: "retrieve_tools",
          arguments: { query: `${name} add two numbers` },
        })) as unknown as { structuredContent: { tools: { name: string }[] } };
        if (result.structuredContent.tools.some((tool) => tool.name === `${name}__add_numbers`)) break;
        if (performance.now() - started > 30_000)
          throw new Error(`${name} did not become searchable in 30 s`);
        await Bun.sleep(10);
      }
      times.push(performance.now() - started);
    }
  } finally {
    await proxy.close();
    rmSync(work, { recursive: true, force: true });
  }
  return { rounds, p50: percentile(times, 50), max: Math.max(...times) };
}

export function formatConfigReloadReport(report: Awaited<ReturnType<typeof measureConfigReload>>): string {
  return `config edit to the new server's tools being searchable (${report.rounds} rounds): p50 ${report.p50.toFixed(0)} ms, max ${report.max.toFixed(0)} ms`;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { rounds: { type: "string" } } });
  process.stdout.write(
    `${formatConfigReloadReport(await measureConfigReload(Number(values.rounds ?? 5)))}\n`,
  );
}
