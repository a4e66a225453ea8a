#!/usr/bin/env bun
/**
 * What a profile costs a search: the same eval requests searched on the whole catalog, and through
 * a profile (scoped-views.ts: the whole catalog searched, then narrowed to the profile's servers),
 * on a real catalog (SQLite + Orama, BM25) of the eval file's tools. The profile holds every
 * `--every`th server. Bounded by `--rounds` and `--max-seconds`. Figures, not pass/fail.
 *
 *   bun bench/profile-search-bench.ts [EVAL.json] [--rounds 200] [--max-seconds 60] [--every 20]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { openToolCatalog, type ToolCatalog } from "../src/index/tool-catalog.ts";
import { silentLogger } from "../src/log.ts";
import { createProfileSelector } from "../src/profiles/profile-selector.ts";
import { scopedCatalog } from "../src/profiles/scoped-views.ts";
import { loadEvalCatalog, requireEvalSet } from "./eval-catalog.ts";
import { percentile } from "./metrics.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: "string", default: "200" },
    "max-seconds": { type: "string", default: "60" },
    every: { type: "string", default: "20" },
  },
});
const file = resolve(requireEvalSet(positionals[0]));
const evalCatalog = loadEvalCatalog(file);
const dataDir = mkdtempSync(join(tmpdir(), "mcpproxy-profile-bench-"));
try {
  const catalog = await openToolCatalog({
    dataDir,
    toolNameLimit: 60,
    reservedNames: new Set(),
    logger: silentLogger,
  });
  const byServer = new Map<
    string,
    { name: string; description: string; inputSchema: { type: "object" } }[]
  >();
  for (const tool of evalCatalog.tools) {
    const list = byServer.get(tool.server) ?? [];
    list.push({ name: tool.name, description: tool.description ?? "", inputSchema: { type: "object" } });
    byServer.set(tool.server, list);
  }
  // Server names of the eval file may hold "/": the proxy's do not.
  const servers = [...byServer.keys()].map((server, i) => ({ server, name: `s${i}` }));
  for (const { server, name } of servers) await catalog.syncServer(name, byServer.get(server)!);
  const every = Number(values.every);
  const chosen = servers.filter((_, i) => i % every === 0).map((s) => s.name);
  const selector = createProfileSelector({ servers: chosen, tags: [], tools: [] }, []);
  const profile = scopedCatalog(catalog, () => selector);
  const queries = evalCatalog.queries.map((query) => query.query);
  const deadline = Date.now() + Number(values["max-seconds"]) * 1000;
  const time = async (target: ToolCatalog) => {
    const times: number[] = [];
    for (let round = 0; round < Number(values.rounds) && Date.now() < deadline; round++) {
      const started = performance.now();
      await target.search(queries[round % queries.length]!, 5);
      times.push(performance.now() - started);
    }
    return times;
  };
  await time(catalog); // warm-up
  for (const [label, target] of [
    ["whole catalog", catalog],
    [`profile (${chosen.length} of ${servers.length} servers, ${profile.size()} tools)`, profile],
  ] as const) {
    const times = await time(target);
    process.stdout.write(
      `${label}: ${catalog.size()} tools; ${times.length} searches; p50 ${percentile(times, 50).toFixed(2)} ms, ` +
        `p95 ${percentile(times, 95).toFixed(2)} ms\n`,
    );
  }
  await catalog.close();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
