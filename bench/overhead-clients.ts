import { StreamableHTTPClientTransport, Client as V2Client } from "@modelcontextprotocol/client";
import { StdioClientTransport as V2StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { watchOutput } from "../tests/helpers.ts";

/**
 * The clients and processes call-overhead.ts measures: a 2025 client (SDK v1) or a 2026-07-28
 * client (SDK v2, pinned) over stdio or streamable HTTP, and the process each talks to, whose pid
 * the CPU figures are read from.
 */
export type Era = "2025" | "2026";

export interface Connected {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

export interface StdioConnected {
  client: Connected;
  /** The process the client spawned (the server, the relay or the proxy). */
  pid: number;
}

export async function connectStdio(
  era: Era,
  argv: readonly string[],
  env?: Record<string, string>,
): Promise<StdioConnected> {
  const [command, ...args] = argv as [string, ...string[]];
  if (era === "2025") {
    const transport = new V1StdioClientTransport({ command, args, ...(env ? { env } : {}), stderr: "pipe" });
    transport.stderr?.on("data", () => {});
    const client = new V1Client({ name: "overhead-bench", version: "1" });
    await client.connect(transport);
    return { client: client as unknown as Connected, pid: transport.pid ?? 0 };
  }
  const transport = new V2StdioClientTransport({ command, args, ...(env ? { env } : {}), stderr: "pipe" });
  transport.stderr?.on("data", () => {});
  const client = new V2Client(
    { name: "overhead-bench", version: "1" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(transport);
  return { client: client as unknown as Connected, pid: transport.pid ?? 0 };
}

export async function connectHttp(era: Era, url: URL): Promise<Connected> {
  if (era === "2025") {
    const client = new V1Client({ name: "overhead-bench", version: "1" });
    await client.connect(new V1StreamableHTTPClientTransport(url));
    return client as unknown as Connected;
  }
  const client = new V2Client(
    { name: "overhead-bench", version: "1" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new StreamableHTTPClientTransport(url));
  return client as unknown as Connected;
}

export interface Started {
  url: URL;
  pid: number;
  stop(): Promise<void>;
}

/** A process that prints `{"port":N}` once it serves HTTP (the fixtures, the byte relay). */
export async function startPortPrinter(argv: readonly string[], path = "/mcp"): Promise<Started> {
  const child = Bun.spawn([...argv], { stdout: "pipe", stderr: "ignore" });
  const port = await watchOutput(child.stdout).waitFor(/\{"port":(\d+)\}/, 15_000);
  return {
    url: new URL(`http://127.0.0.1:${port}${path}`),
    pid: child.pid,
    stop: async () => {
      child.kill();
      await child.exited;
    },
  };
}

/** `mcpproxy serve --transport http --port 0` of `binary`, once it says where it serves. */
export async function startHttpServe(
  binary: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<Started> {
  const child = Bun.spawn([binary, "serve", "--transport", "http", "--port", "0", ...args], {
    env: { ...env, MCPPROXY_LOG_LEVEL: "info" },
    stdout: "ignore",
    stderr: "pipe",
  });
  const url = await watchOutput(child.stderr).waitFor(/serving MCP at (http:\/\/\S+?);/, 60_000);
  return {
    url: new URL(url),
    pid: child.pid,
    stop: async () => {
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}
