#!/usr/bin/env bun
/**
 * What a person's tool overrides cost the catalog, in process: a synthetic catalog of TOOLS tools
 * (5 per server) indexed once, then timed: applying OVERRIDES overrides (a third each disabled,
 * renamed, re-described) as a config reload does, a restart with them (the search snapshot is
 * stamped with the overrides, so a changed set rebuilds it), a restart with the same set (the
 * snapshot loads), and search with and without them. Lexical only (no embedder). Figures, not
 * pass/fail.
 *
 *   bun bench/tool-overrides-bench.ts [--tools 10000] [--overrides 300]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { ToolOverride } from "../src/config/tool-override-settings.ts";
import { openToolCatalog } from "../src/index/tool-catalog.ts";
import type { ToolOverrides } from "../src/index/tool-overrides.ts";
import { silentLogger } from "../src/log.ts";
import { percentile } from "./metrics.ts";

const { values } = parseArgs({
  options: { tools: { type: "string", default: "10000" }, overrides: { type: "string", default: "300" } },
});
const TOOLS = Number(values.tools);
const OVERRIDES = Number(values.overrides);
const PER_SERVER = 5;
const VERBS = ["create", "list", "delete", "update", "get"];
const NOUNS = ["issue", "file", "record", "invoice", "ticket", "message", "branch", "order"];

const serverTools = (s: number) =>
  Array.from({ length: PER_SERVER }, (_, i) => ({
    name: `${VERBS[i]}_${NOUNS[s % NOUNS.length]}`,
    description: `${VERBS[i]} a ${NOUNS[s % NOUNS.length]} in service ${s}`,
    inputSchema: { type: "object", properties: { id: { type: "string" } } },
  }));

function overridesOf(count: number, salt: string): ToolOverrides {
  const byServer = new Map<string, Record<string, ToolOverride>>();
  for (let n = 0; n < count; n++) {
    const s = (n * 7) % (TOOLS / PER_SERVER);
    const tool = serverTools(s)[n % PER_SERVER]!.name;
    const kind = n % 3;
    const override: ToolOverride =
      kind === 0
        ? { enabled: false }
        : kind === 1
          ? { name: `renamed_${n}` }
          : { description: `${salt} text ${n}` };
    byServer.set(`svc${s}`, { ...byServer.get(`svc${s}`), [tool]: override });
  }
  return byServer;
}

const time = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
  const started = performance.now();
  const result = await work();
  return [result, performance.now() - started];
};

const dataDir = mkdtempSync(join(tmpdir(), "mcpproxy-overrides-bench-"));
const open = (toolOverrides: ToolOverrides) =>
  openToolCatalog({
    dataDir,
    toolNameLimit: 64,
    reservedNames: new Set(),
    logger: silentLogger,
    toolOverrides,
  });
try {
  const catalog = await open(new Map());
  for (let s = 0; s < TOOLS / PER_SERVER; s++) await catalog.syncServer(`svc${s}`, serverTools(s));
  catalog.names();
  await catalog.persist();
  const searchMs = async () => {
    const times: number[] = [];
    for (let i = 0; i < 50; i++) {
      const [, ms] = await time(() => catalog.search(`${VERBS[i % 5]} ${NOUNS[i % 8]} service ${i}`, 5));
      times.push(ms);
    }
    return percentile(times, 0.5);
  };
  await searchMs(); // warm-up
  const plainSearch = await searchMs();
  const [touched, applyMs] = await time(() => catalog.setOverrides(overridesOf(OVERRIDES, "first")));
  const [, namesMs] = await time(async () => catalog.names());
  const overriddenSearch = await searchMs();
  await catalog.persist();
  await catalog.close();

  const [changedSet, changedOpenMs] = await time(() => open(overridesOf(OVERRIDES, "second")));
  await changedSet.persist();
  await changedSet.close();
  const [sameSet, sameOpenMs] = await time(() => open(overridesOf(OVERRIDES, "second")));
  await sameSet.close();

  const row = (label: string, ms: number) =>
    process.stdout.write(`${label.padEnd(58)} ${ms.toFixed(1)} ms\n`);
  process.stdout.write(
    `${TOOLS} tools on ${TOOLS / PER_SERVER} servers, ${OVERRIDES} overrides (${touched} tools touched)\n`,
  );
  row("apply the overrides (config reload: re-index the touched)", applyMs);
  row("first read after it (every public name recomputed)", namesMs);
  row("restart with another set of overrides (index rebuilt)", changedOpenMs);
  row("restart with the same set (snapshot loaded)", sameOpenMs);
  row("search p50 without overrides", plainSearch);
  row("search p50 with overrides", overriddenSearch);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
