import { afterEach } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { stopAfterTest } from "./test-scope.ts";

/** Shared plumbing for the end-to-end tests: the compiled binary, real fixture servers, temp homes. */
export const ROOT = resolve(import.meta.dir, "..");
export const BINARY = join(ROOT, "dist", "mcpproxy");
export const FIXTURE = join(ROOT, "tests", "fixtures", "fixture-server.ts");
/** The SDK v2 fixture that speaks MCP 2026-07-28 (tests/fixtures/modern-server.ts). */
export const MODERN_FIXTURE = join(ROOT, "tests", "fixtures", "modern-server.ts");
export const EVERYTHING = join(
  ROOT,
  "node_modules",
  "@modelcontextprotocol",
  "server-everything",
  "dist",
  "index.js",
);

export function requireBinary(): string {
  if (!existsSync(BINARY))
    throw new Error(`${BINARY} is missing: run \`npm run build\` first (npm test does)`);
  return BINARY;
}

export interface Sandbox {
  dir: string;
  home: string;
  dataDir: string;
  configPath: string;
  writeConfig(config: unknown): string;
  /** The environment the proxy runs with: a private HOME and nothing secret unless added. */
  env(extra?: Record<string, string>): Record<string, string>;
  cleanup(): void;
}

export function createSandbox(): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-test-"));
  const home = join(dir, "home");
  const dataDir = join(dir, "data");
  const configPath = join(dir, "mcp_config.json");
  return {
    dir,
    home,
    dataDir,
    configPath,
    writeConfig(config) {
      writeFileSync(configPath, JSON.stringify(config, null, 2));
      return configPath;
    },
    env: (extra = {}) => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, ...extra }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** An MCP initialize request as a client sends it, for tests that speak raw JSON-RPC. */
export function initializeRequest(id: string | number = 1, client = "raw") {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: client, version: "1" } },
  };
}

/** How many tools the fixture server lists (tests/fixtures/fixture-server.ts). */
export const FIXTURE_TOOLS = 14;

/** The proxy's own tools in the order it lists them (call-tool routing, and first in every list). */
export const OWN_TOOLS = [
  "retrieve_tools",
  "call_tool",
  "upstream_servers",
  "tools_stat",
  "get_tool_alternatives",
  "read_result",
];
/** The same, sorted, for the tests that compare sorted name lists. */
export const OWN_TOOLS_SORTED = [...OWN_TOOLS].sort();

/** A stdio server entry that runs the fixture server under the Bun that runs the tests. */
export function fixtureEntry(
  options: { args?: string[]; env?: Record<string, string>; timeoutMs?: number } = {},
) {
  return {
    command: process.execPath,
    args: [FIXTURE, ...(options.args ?? [])],
    ...(options.env ? { env: options.env } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  };
}

/** A stdio server entry that runs the 2026-07-28 fixture server under the Bun that runs the tests. */
export function modernEntry(options: { args?: string[]; env?: Record<string, string> } = {}) {
  return {
    command: process.execPath,
    args: [MODERN_FIXTURE, ...(options.args ?? [])],
    ...(options.env ? { env: options.env } : {}),
  };
}

/** Starts the 2026-07-28 fixture server over HTTP on a free port (`args`: more of its flags). */
export async function startModernHttpFixture(args: string[] = [], env: Record<string, string> = {}) {
  const child = Bun.spawn([process.execPath, MODERN_FIXTURE, "--http", "0", ...args], {
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "ignore",
  });
  const stop = stopAfterTest(() => child.kill());
  const port = await watchOutput(child.stdout).waitFor(/\{"port":(\d+)\}/, 10_000);
  return { url: `http://127.0.0.1:${port}/mcp`, child, stop };
}

/** The published reference server, run with Node as users run it through npx. */
export function everythingEntry() {
  return { command: "node", args: [EVERYTHING, "stdio"] };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCli(args: string[], env: Record<string, string>, cwd?: string): Promise<CliResult> {
  return runProcess([requireBinary(), ...args], env, cwd);
}

/** Runs a command to its end and collects its output; async, so a server in the test process keeps answering. */
export async function runProcess(
  argv: string[],
  env: Record<string, string>,
  cwd?: string,
): Promise<CliResult> {
  const child = Bun.spawn(argv, { env, cwd: cwd ?? tmpdir(), stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
}

/** A real MCP client talking to `mcpproxy serve` over stdio. */
export async function connectStdio(
  sandbox: Sandbox,
  extraEnv: Record<string, string> = {},
  /** More `serve` flags (`--passthrough NAME`, `--routing …`). */
  extraArgs: string[] = [],
) {
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["serve", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir, ...extraArgs],
    env: sandbox.env(extraEnv),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: "e2e-test", version: "1.0.0" });
  const close = stopAfterTest(() => client.close());
  await client.connect(transport);
  return { client, stderr: () => stderr, close };
}

/** Starts `mcpproxy serve --transport http --port 0` and waits for the address it prints. */
export async function startHttpProxy(
  sandbox: Sandbox,
  extraArgs: string[] = [],
  env: Record<string, string> = {},
) {
  const child = Bun.spawn(
    [
      requireBinary(),
      "serve",
      "--transport",
      "http",
      "--port",
      "0",
      "--config",
      sandbox.configPath,
      "--data-dir",
      sandbox.dataDir,
      ...extraArgs,
    ],
    { env: sandbox.env(env), stdout: "pipe", stderr: "pipe" },
  );
  const stop = stopAfterTest(() => {
    child.kill("SIGTERM");
    return child.exited;
  });
  const stderr = watchOutput(child.stderr);
  const url = await stderr.waitFor(/serving MCP at (http:\/\/\S+?);/, 15_000);
  return { url: new URL(url), child, stderr, stop };
}

/** Starts the fixture server over HTTP on a free port (`args`: more of its flags). */
export async function startHttpFixture(name = "web", args: string[] = []) {
  const child = Bun.spawn([process.execPath, FIXTURE, "--http", "0", "--name", name, ...args], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const stop = stopAfterTest(() => child.kill());
  const port = await watchOutput(child.stdout).waitFor(/\{"port":(\d+)\}/, 10_000);
  return { url: `http://127.0.0.1:${port}/mcp`, child, stop };
}

export async function connectHttp(url: URL) {
  const client = new Client({ name: "e2e-test", version: "1.0.0" });
  stopAfterTest(() => client.close());
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

/** Reads a child's output to the end in the background (so its pipe never fills) and lets a test wait for a line. */
export function watchOutput(stream: ReadableStream<Uint8Array>) {
  let seen = "";
  const decoder = new TextDecoder();
  const done = (async () => {
    for await (const chunk of stream) seen += decoder.decode(chunk, { stream: true });
  })().catch(() => undefined);
  return {
    text: () => seen,
    done,
    async waitFor(pattern: RegExp, timeoutMs: number): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const match = pattern.exec(seen);
        if (match) return match[1] ?? match[0];
        await Bun.sleep(20);
      }
      throw new Error(`did not see ${pattern} within ${timeoutMs} ms; output so far:\n${seen}`);
    },
  };
}

/** The structured result of retrieve_tools. */
export interface Retrieved {
  query: string;
  tools: {
    name: string;
    server: string;
    tool: string;
    description: string;
    inputSchema: object;
    title?: string;
    annotations?: Record<string, unknown>;
    outputSchema?: object;
    score: number;
  }[];
  hint?: string;
}

export async function retrieve(client: Client, query: string, topK?: number): Promise<Retrieved> {
  const result = await client.callTool({
    name: "retrieve_tools",
    arguments: { query, ...(topK ? { top_k: topK } : {}) },
  });
  if (result.isError) throw new Error(`retrieve_tools failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent as unknown as Retrieved;
}

/**
 * Runs server-everything over HTTP on a free port (or `port`, to restart it where it was):
 * `sse` is its legacy SSE transport, `streamableHttp` its streamable HTTP one. Resolves once it listens.
 */
export async function startEverythingHttp(mode: "sse" | "streamableHttp", port?: number) {
  port ??= await freePort();
  const child = Bun.spawn(["node", EVERYTHING, mode], {
    env: { ...process.env, PORT: String(port) },
    stdout: "pipe",
    stderr: "pipe",
  });
  const stop = stopAfterTest(() => child.kill());
  watchOutput(child.stdout);
  await watchOutput(child.stderr).waitFor(/(running|listening) on port (\d+)/, 15_000);
  const url = `http://127.0.0.1:${port}/${mode === "sse" ? "sse" : "mcp"}`;
  return { url, port, child, stop };
}

/** The pids of running processes whose command line contains `token` (a unique server name, say). */
export function processesMatching(token: string): number[] {
  const ps = Bun.spawnSync(["ps", "-eo", "pid=,args="]);
  return new TextDecoder()
    .decode(ps.stdout)
    .split("\n")
    .filter((line) => line.includes(token) && !line.includes("ps -eo"))
    .map((line) => Number.parseInt(line.trim(), 10));
}

/** Polls `check` until it holds or `timeoutMs` passes; resolves to its last value. */
export async function eventually<T>(
  check: () => T | Promise<T>,
  holds: (value: T) => boolean,
  timeoutMs: number,
) {
  const deadline = Date.now() + timeoutMs;
  let value = await check();
  while (!holds(value) && Date.now() < deadline) {
    await Bun.sleep(50);
    value = await check();
  }
  return value;
}

/** A free TCP port on 127.0.0.1 (free when asked; tests use it at once). */
export async function freePort(): Promise<number> {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port!;
  await probe.stop(true);
  return port;
}

/**
 * Cleanup after each test of a file: what a test starts (proxies, servers, sandboxes) is stopped
 * when it ends, last first, even when it fails. Call once at the top of the file.
 */
export function cleanupAfterEach() {
  const steps: (() => unknown)[] = [];
  afterEach(async () => {
    for (const step of steps.splice(0).reverse()) await step();
  });
  return {
    defer(...more: (() => unknown)[]): void {
      steps.push(...more);
    },
    /** A sandbox removed after the test. */
    sandbox(): Sandbox {
      const sandbox = createSandbox();
      steps.push(() => sandbox.cleanup());
      return sandbox;
    },
  };
}

/** One server's entry in `/health` (the fields the tests read). */
export interface ServerHealth {
  name: string;
  state: string;
  error?: string;
  tools?: number;
  retryAt?: string;
  failures?: number;
  circuitOpen?: boolean;
  protocolVersion?: string;
}

/**
 * `serve` over HTTP on `servers`, with an MCP client connected and `/health` to read; all of it
 * ended after the test.
 */
export async function httpProxyWithClient(
  scope: ReturnType<typeof cleanupAfterEach>,
  servers: Record<string, unknown>,
  env: Record<string, string> = {},
) {
  const sandbox = scope.sandbox();
  sandbox.writeConfig({ mcpServers: servers });
  const proxy = await startHttpProxy(sandbox, [], env);
  scope.defer(() => proxy.stop());
  const client = await connectHttp(proxy.url);
  scope.defer(() => client.close());
  const health = async () =>
    (await (await fetch(new URL("/health", proxy.url))).json()) as { servers: ServerHealth[] };
  return { sandbox, proxy, client, health };
}

/**
 * The JSON-RPC text a streamable HTTP POST answered: the body as it is, or the last `data:` event
 * when the server answered with an SSE stream; undefined for an empty answer.
 */
export function jsonRpcText(response: Response, text: string): string | undefined {
  if (!response.headers.get("content-type")?.includes("text/event-stream")) return text || undefined;
  return text
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim())
    .at(-1);
}

/**
 * An access token from the authorization server fixture (tests/fixtures/authorization-server.ts) on
 * `port`, by the client-credentials grant: client `client` with the secret `<client>-secret`.
 */
export async function clientCredentialsToken(port: number, client: string, scope?: string): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/token`, {
    method: "POST",
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: client,
      client_secret: `${client}-secret`,
      ...(scope !== undefined ? { scope } : {}),
    }),
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

/** mulberry32: a small seeded generator in [0, 1), for fuzz inputs and bootstrap resampling that can be replayed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
