import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { connectHttp, createSandbox, runCli, type Sandbox, startHttpProxy } from "../helpers.ts";
import { postgresBinDir } from "./temp-postgres.ts";

/**
 * Replicas of `mcpproxy serve --store` for the shared-store tests: each its own sandbox (data dir,
 * a copy of the same config file, HOME), all one PostgreSQL database and one MCPPROXY_STORE_KEY.
 */
export const STORE_KEY = randomBytes(32).toString("hex");

export interface Replica {
  sandbox: Sandbox;
  proxy: Awaited<ReturnType<typeof startHttpProxy>>;
  client: Client;
  /** `upstream_servers` on this replica; resolves to the structured answer, or throws its error text. */
  servers(operation: string, extra?: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Its `upstream_servers` answer as the agent sees it, error or not. */
  serversRaw(operation: string, extra?: Record<string, unknown>): Promise<{ isError: boolean; text: string }>;
  call(name: string, args?: Record<string, unknown>): Promise<{ isError: boolean; text: string }>;
  stop(): Promise<void>;
}

const textOf = (result: unknown) =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");

export async function startReplica(
  storeUrl: string,
  config: unknown,
  env: Record<string, string> = {},
): Promise<Replica> {
  const sandbox = createSandbox();
  sandbox.writeConfig(config);
  const proxy = await startHttpProxy(sandbox, ["--store", storeUrl], {
    MCPPROXY_STORE_KEY: STORE_KEY,
    ...env,
  });
  const client = await connectHttp(proxy.url);
  const serversRaw = async (operation: string, extra: Record<string, unknown> = {}) => {
    const result = await client.callTool(
      { name: "upstream_servers", arguments: { operation, ...extra } },
      CallToolResultSchema,
      { timeout: 30_000 },
    );
    return { isError: result.isError === true, text: textOf(result), structured: result.structuredContent };
  };
  return {
    sandbox,
    proxy,
    client,
    serversRaw,
    async servers(operation, extra) {
      const answer = await serversRaw(operation, extra);
      if (answer.isError) throw new Error(answer.text);
      return answer.structured as Record<string, unknown>;
    },
    async call(name, args = {}) {
      const result = await client.callTool({ name: "call_tool", arguments: { name, arguments: args } });
      return { isError: result.isError === true, text: textOf(result) };
    },
    async stop() {
      await client.close().catch(() => undefined);
      await proxy.stop();
      sandbox.cleanup();
    },
  };
}

/** `mcpproxy <args> --store URL` with the store key (and `env`), from `sandbox`'s config. */
export function storeCli(
  storeUrl: string,
  sandbox: Sandbox,
  args: string[],
  env: Record<string, string> = {},
) {
  return runCli(
    [...args, "--store", storeUrl, "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
    sandbox.env({ MCPPROXY_STORE_KEY: STORE_KEY, ...env }),
  );
}

/** Runs SQL with psql against the store; resolves to its unaligned output. */
export async function psql(storeUrl: string, query: string): Promise<string> {
  const child = Bun.spawn(
    [join(postgresBinDir()!, "psql"), "-At", "-v", "ON_ERROR_STOP=1", storeUrl, "-c", query],
    {
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const [code, out, err] = await Promise.all([
    child.exited,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  if (code !== 0) throw new Error(`psql exited ${code}: ${err}`);
  return out.trim();
}

/** The whole database as pg_dump writes it (data included). */
export async function pgDump(storeUrl: string): Promise<string> {
  const child = Bun.spawn([join(postgresBinDir()!, "pg_dump"), storeUrl], { stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([
    child.exited,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  if (code !== 0) throw new Error(`pg_dump exited ${code}: ${err}`);
  return out;
}

/** A fresh database on the test cluster, for a test that must start from an empty store. */
export async function freshDatabase(clusterUrl: string, name: string): Promise<string> {
  await psql(clusterUrl, `CREATE DATABASE ${name}`);
  const url = new URL(clusterUrl);
  url.pathname = `/${name}`;
  return url.href;
}
