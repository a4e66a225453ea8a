import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { requireBinary, type Sandbox, watchOutput } from "../helpers.ts";

/** The key every replica of a test deployment shares (MCPPROXY_STORE_KEY). */
export const TEST_STORE_KEY = "5f1e0c9a7b3d2e4f6a8b0c1d2e3f405162738495a6b7c8d9e0f1a2b3c4d5e6f7";

export interface Replica {
  name: string;
  url: URL;
  dataDir: string;
  child: ReturnType<typeof Bun.spawn>;
  stderr: ReturnType<typeof watchOutput>;
  stop(): Promise<number>;
  kill(): Promise<number>;
}

/**
 * Starts `mcpproxy serve --transport http --store URL` as one replica of a team deployment: the
 * sandbox's config, a data dir of its own (`<sandbox>/replica-<name>`), the shared key.
 */
export async function startReplica(
  sandbox: Sandbox,
  storeUrl: string,
  name: string,
  options: { args?: string[]; env?: Record<string, string>; port?: number } = {},
): Promise<Replica> {
  const dataDir = join(sandbox.dir, `replica-${name}`);
  mkdirSync(dataDir, { recursive: true });
  const child = Bun.spawn(
    [
      requireBinary(),
      ...["serve", "--transport", "http", "--port", String(options.port ?? 0)],
      ...["--config", sandbox.configPath, "--data-dir", dataDir, "--store", storeUrl],
      ...(options.args ?? []),
    ],
    {
      env: sandbox.env({ MCPPROXY_STORE_KEY: TEST_STORE_KEY, ...options.env }),
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const stderr = watchOutput(child.stderr);
  const url = await stderr.waitFor(/serving MCP at (http:\/\/\S+?);/, 20_000);
  return {
    name,
    url: new URL(url),
    dataDir,
    child,
    stderr,
    async stop() {
      child.kill("SIGTERM");
      return child.exited;
    },
    async kill() {
      child.kill("SIGKILL");
      return child.exited;
    },
  };
}

/** `mcpproxy <args> --store URL` beside the replicas (a person's command on another machine). */
export function storeCommandEnv(sandbox: Sandbox): Record<string, string> {
  return sandbox.env({ MCPPROXY_STORE_KEY: TEST_STORE_KEY });
}
