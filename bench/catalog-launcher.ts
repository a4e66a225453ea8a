import { writeFileSync } from "node:fs";
import { join } from "node:path";
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
  for (const tool of catalog.tools) {
    mcpServers[tool.server] ??= { url: `http://127.0.0.1:${port}${serverPath(tool.server)}` };
  }
  const configPath = join(workDir, "mcp_config.json");
  writeFileSync(configPath, JSON.stringify({ mcpServers }));
  return {
    port,
    servers,
    configPath,
    async stop() {
      child.kill();
      await child.exited;
    },
  };
}
