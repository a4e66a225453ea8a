import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ResolvedConfig } from "../config/load-config.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import { openToolCatalog, type ToolCatalog } from "../index/tool-catalog.ts";
import { silentLogger } from "../log.ts";
import type { ConnectOutcome } from "../upstream/pool-types.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
import { refreshCatalog } from "./refresh-catalog.ts";

const dirs: string[] = [];
const catalogs: ToolCatalog[] = [];
afterEach(async () => {
  for (const catalog of catalogs.splice(0)) await catalog.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function openCatalog() {
  const dataDir = mkdtempSync(join(tmpdir(), "mcpproxy-refresh-catalog-"));
  dirs.push(dataDir);
  const catalog = await openToolCatalog({
    dataDir,
    toolNameLimit: 60,
    reservedNames: new Set(),
    logger: silentLogger,
    approvalPolicy: {
      trustOf: () => "pin",
      quarantinesNew: () => false,
      findingsOf: () => [],
      blockFindings: false,
    },
  });
  catalogs.push(catalog);
  return catalog;
}

const server = (name: string) =>
  ({
    name,
    enabled: true,
    timeoutMs: 15_000,
    transport: "stdio",
    command: "x",
    args: [],
    env: {},
  }) as ServerConfig;
const tools = (server: string) => [
  {
    name: "add_numbers",
    description: `Add two numbers (${server})`,
    inputSchema: { type: "object" as const },
  },
];

describe("the first indexing pass", () => {
  test("keeps the tools of a server a config change added while it ran", async () => {
    const catalog = await openCatalog();
    const config = { configPath: "mcp_config.json", servers: [server("fx")] } as unknown as ResolvedConfig;
    let servers: readonly ServerConfig[] = config.servers;
    // The pool reaches fx; meanwhile the config gains `second`, which connects and is indexed first
    // (as serve's config watch and re-index do), before the pass ends.
    const pool = {
      async connectAll(onOutcome: (outcome: ConnectOutcome) => Promise<void>) {
        servers = [server("fx"), server("second")];
        await catalog.syncServer("second", tools("second"));
        const outcome = { server: "fx", tools: tools("fx") };
        await onOutcome(outcome);
        return [outcome];
      },
    } as unknown as UpstreamPool;
    const report = await refreshCatalog(config, catalog, pool, {
      logger: silentLogger,
      servers: () => servers,
    });
    expect(report.totals.removed).toBe(0);
    expect(catalog.names().sort()).toEqual(["fx__add_numbers", "second__add_numbers"]);
  });

  test("drops the tools of a server no longer in the config when it ends", async () => {
    const catalog = await openCatalog();
    await catalog.syncServer("gone", tools("gone"));
    const config = {
      configPath: "mcp_config.json",
      servers: [server("fx"), server("gone")],
    } as unknown as ResolvedConfig;
    let servers: readonly ServerConfig[] = config.servers;
    const pool = {
      async connectAll(onOutcome: (outcome: ConnectOutcome) => Promise<void>) {
        servers = [server("fx")];
        const outcome = { server: "fx", tools: tools("fx") };
        await onOutcome(outcome);
        return [outcome];
      },
    } as unknown as UpstreamPool;
    const report = await refreshCatalog(config, catalog, pool, {
      logger: silentLogger,
      servers: () => servers,
    });
    expect(report.totals.removed).toBe(1);
    expect(catalog.names()).toEqual(["fx__add_numbers"]);
  });
});
