#!/usr/bin/env bun
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
/**
 * What self-healing costs, through `mcpproxy serve` over stdio (issue 24 part 4):
 *  - `retrieve_tools` with and without `include_metrics`, with the statistics of `--tools` tools
 *    recorded (each called once first), interleaved;
 *  - a failing read-only call without a fallback (the failure and its alternatives) and with
 *    `autoRetryFallback` (the failure, its alternatives and the retry on another server), beside a
 *    call that works, interleaved.
 * Reports p50/p95 in ms of each; bounded by `--rounds` (each measured that many times).
 *
 *   bun bench/self-healing-bench.ts [--rounds N] [--tools N]
 */
import { FIXTURE } from "../tests/helpers.ts";
import { percentile } from "./metrics.ts";
import { benchEnv, startProxyStdio } from "./proxy-process.ts";

const { values } = parseArgs({ options: { rounds: { type: "string" }, tools: { type: "string" } } });
const rounds = Math.min(2_000, Number(values.rounds ?? 300));
const toolCount = Math.min(5_000, Number(values.tools ?? 500));

const search = {
  name: "search_notes",
  description: "Search the notes for a text and return the notes that contain it",
  inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
  annotations: { readOnlyHint: true },
};
const work = mkdtempSync(join(tmpdir(), "mcpproxy-self-healing-"));
const toolsFile = join(work, "notes.json");
writeFileSync(toolsFile, JSON.stringify([search]));
const notes = (name: string, failing: boolean, autoRetryFallback: boolean) => ({
  command: process.execPath,
  args: [FIXTURE, "--name", name, "--tools-file", toolsFile],
  env: { FIXTURE_FAIL_TOOLS: failing ? "search_notes" : "" },
  autoRetryFallback,
});
const configPath = join(work, "mcp_config.json");
writeFileSync(
  configPath,
  JSON.stringify({
    mcpServers: {
      many: {
        command: process.execPath,
        args: [FIXTURE, "--name", "many", "--many-tools", String(toolCount)],
      },
      plain: notes("plain", true, false),
      healing: notes("healing", true, true),
      mirror: notes("mirror", false, true),
    },
  }),
);

const proxy = await startProxyStdio(configPath, join(work, "data"), benchEnv(join(work, "home")));
const timed = async (run: () => Promise<unknown>) => {
  const started = performance.now();
  await run();
  return performance.now() - started;
};
const callTool = (name: string, args: Record<string, unknown>) =>
  proxy.client.callTool({ name: "call_tool", arguments: { name, arguments: args } });
try {
  for (let i = 0; i < toolCount; i++) await callTool(`many__generated_${i}`, { value: "x" });
  const samples: Record<string, number[]> = {};
  const measure = async (label: string, run: () => Promise<unknown>) => {
    const ms = await timed(run);
    samples[label] = [...(samples[label] ?? []), ms];
  };
  const query = "generated tool number of the fixture";
  const retrieve = (extra: Record<string, unknown>) => () =>
    proxy.client.callTool({ name: "retrieve_tools", arguments: { query, top_k: 5, ...extra } });
  for (let round = 0; round < rounds; round++) {
    await measure("retrieve_tools", retrieve({}));
    await measure("retrieve_tools, include_metrics", retrieve({ include_metrics: true }));
    await measure("a call that works", () => callTool("mirror__search_notes", { query: "x" }));
    await measure("a failing call, no fallback", () => callTool("plain__search_notes", { query: "x" }));
    await measure("a failing call, autoRetryFallback", () =>
      callTool("healing__search_notes", { query: "x" }),
    );
  }
  const healed = (await callTool("healing__search_notes", { query: "x" })) as {
    _meta?: Record<string, unknown>;
  };
  if (!healed._meta?.["mcpproxy/fallback"])
    throw new Error("the fallback did not happen: the figures would be wrong");
  const lines = Object.entries(samples).map(
    ([label, ms]) =>
      `  ${label.padEnd(36)} p50 ${percentile(ms, 50).toFixed(2)} ms  p95 ${percentile(ms, 95).toFixed(2)} ms`,
  );
  process.stdout.write(
    `self-healing costs: ${rounds} rounds, statistics of ${toolCount + 3} tools recorded\n${lines.join("\n")}\n`,
  );
} finally {
  await proxy.close();
  rmSync(work, { recursive: true, force: true });
}
