import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { usableServerName } from "../src/security/server-names.ts";
import { watchOutput } from "../tests/helpers.ts";
import type { EvalCatalog } from "./eval-catalog.ts";
import { serverPath } from "./eval-catalog.ts";
import { ROOT } from "./proxy-process.ts";

/**
 * Runs bench/catalog-server.ts for a catalog file and writes the mcpproxy config that points at
 * every one of its servers. Stop it with `stop()`.
 */
export interface LaunchedCatalog {
  port: number;
  servers: number;
  configPath: string;
  /**
   * The catalog's server of a name in the config: a catalog name the config would refuse
   * (`@scope/package` holds a `/`) is given a usable one there, as `mcpproxy import` does.
   */
  catalogServer(configName: string): string;
  stop(): Promise<void>;
}

export async function launchCatalog(
  file: string,
  catalog: EvalCatalog,
  workDir: string,
): Promise<LaunchedCatalog> {
  const child = Bun.spawn([process.execPath, join(ROOT, "bench", "catalog-server.ts"), file], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const line = await watchOutput(child.stdout).waitFor(/^(\{"port".*\})$/m, 30_000);
  const { port, servers } = JSON.parse(line) as { port: number; servers: number };
  const mcpServers: Record<string, unknown> = {};
  const configNameOf = new Map<string, string>();
  const catalogNameOf = new Map<string, string>();
  for (const tool of catalog.tools) {
    if (configNameOf.has(tool.server)) continue;
    let name = usableServerName(tool.server);
    for (let n = 2; catalogNameOf.has(name); n++) name = `${usableServerName(tool.server)}-${n}`;
    configNameOf.set(tool.server, name);
    catalogNameOf.set(name, tool.server);
    mcpServers[name] = { url: `http://127.0.0.1:${port}${serverPath(tool.server)}` };
  }
  const configPath = join(workDir, "mcp_config.json");
  writeFileSync(configPath, JSON.stringify({ mcpServers }));
  return {
    port,
    servers,
    configPath,
    catalogServer: (configName) => catalogNameOf.get(configName) ?? configName,
    async stop() {
      child.kill();
      await child.exited;
    },
  };
}
