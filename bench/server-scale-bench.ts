import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchCatalog } from "./catalog-launcher.ts";
import { type EvalCatalog, evalSetPath, loadEvalCatalog, missingEvalSet } from "./eval-catalog.ts";
import { benchEnv, requireBinary } from "./proxy-process.ts";

/**
 * Indexing speed by the number of configured servers (`npm run bench:scale -- --only servers`):
 * the eval catalog copied under renamed servers until there are N of them (about 4.8 tools each),
 * served over HTTP by bench/catalog-server.ts, indexed by `mcpproxy index` from an empty data dir.
 * A per-server cost that grows with the configured count shows as a lower rate at the larger N.
 * Each run is bounded: past `maxSeconds` it is stopped, and the servers it had indexed by then
 * (read from its catalog) give the rate.
 */
export interface ServerScaleRow {
  servers: number;
  tools: number;
  seconds: number;
  /** Servers indexed (all of them, unless the run was stopped at the bound). */
  indexed: number;
  finished: boolean;
}

/** The eval catalog repeated under renamed servers ("<server> #2", …) until it has `servers` servers. */
export function replicateServers(catalog: EvalCatalog, servers: number): EvalCatalog {
  const byServer = new Map<string, EvalCatalog["tools"]>();
  for (const tool of catalog.tools) byServer.set(tool.server, [...(byServer.get(tool.server) ?? []), tool]);
  const tools: EvalCatalog["tools"] = [];
  let made = 0;
  for (let copy = 1; made < servers; copy++) {
    for (const [server, own] of byServer) {
      if (made >= servers) break;
      const name = copy === 1 ? server : `${server} #${copy}`;
      for (const tool of own) tools.push({ ...tool, server: name });
      made++;
    }
  }
  return { tools, queries: [] };
}

export async function runServerScaleBench(
  counts: readonly number[],
  maxSeconds: number,
): Promise<ServerScaleRow[]> {
  const evalFile = evalSetPath();
  if (!evalFile) throw new Error(`the server catalogs are built from the eval set: ${missingEvalSet()}`);
  const source = loadEvalCatalog(evalFile);
  const rows: ServerScaleRow[] = [];
  for (const servers of counts) {
    const work = mkdtempSync(join(tmpdir(), "mcpproxy-servers-"));
    try {
      const catalog = replicateServers(source, servers);
      const file = join(work, "catalog.json");
      writeFileSync(file, JSON.stringify(catalog));
      const launched = await launchCatalog(file, catalog, work);
      const dataDir = join(work, "data");
      mkdirSync(dataDir);
      try {
        const started = performance.now();
        const child = Bun.spawn(
          [requireBinary(), "index", "--config", launched.configPath, "--data-dir", dataDir],
          { env: benchEnv(join(work, "home")), stdout: "ignore", stderr: "ignore" },
        );
        const timer = setTimeout(() => child.kill("SIGKILL"), maxSeconds * 1000);
        const code = await child.exited;
        clearTimeout(timer);
        const seconds = (performance.now() - started) / 1000;
        const finished = code === 0 || code === 1; // 1: some server failed, the run is complete
        rows.push({
          servers,
          tools: catalog.tools.length,
          seconds,
          indexed: finished ? servers : indexedServers(dataDir),
          finished,
        });
      } finally {
        await launched.stop();
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  return rows;
}

/** How many servers a stopped run had committed to its catalog. */
function indexedServers(dataDir: string): number {
  const path = join(dataDir, "catalog.db");
  if (!existsSync(path)) return 0;
  const db = new Database(path, { readonly: true });
  try {
    return db.query<{ n: number }, []>("SELECT COUNT(DISTINCT server) AS n FROM tools").get()?.n ?? 0;
  } finally {
    db.close();
  }
}

export function formatServerScaleReport(rows: readonly ServerScaleRow[], maxSeconds: number): string {
  return [
    `Indexing by configured servers (the eval catalog copied under renamed servers, HTTP; runs stopped at ${maxSeconds} s)`,
    "",
    "| servers | tools | index | servers/s |",
    "|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.servers.toLocaleString("en")} | ${r.tools.toLocaleString("en")} | ` +
        `${r.finished ? `${r.seconds.toFixed(1)} s` : `stopped at ${r.seconds.toFixed(0)} s with ${r.indexed.toLocaleString("en")} indexed`} | ` +
        `${(r.indexed / r.seconds).toFixed(0)} |`,
    ),
  ].join("\n");
}
