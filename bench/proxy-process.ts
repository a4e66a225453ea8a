import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

/** Helpers the benchmarks share: the compiled binary, run as users run it. */
export const ROOT = resolve(import.meta.dir, "..");
export const BINARY = join(ROOT, "dist", "mcpproxy");

export function requireBinary(): string {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`npm run build\` first`);
  return BINARY;
}

/** Peak resident set size (VmHWM) of a live process in MiB, from /proc; NaN where there is no /proc. */
export function peakRssMiB(pid: number): number {
  return statusMiB(pid, "VmHWM");
}

/** Resident set size now (VmRSS) of a live process in MiB, from /proc; NaN where there is none. */
export function currentRssMiB(pid: number): number {
  return statusMiB(pid, "VmRSS");
}

function statusMiB(pid: number, field: "VmHWM" | "VmRSS"): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(status)?.[1]) / 1024;
  } catch {
    return Number.NaN;
  }
}

/** User + system CPU seconds a live process has used, from /proc; NaN where there is none. */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * The on-CPU seconds of a process's main thread (the one that runs its JavaScript) and of all its
 * other threads together (the JIT's compiler threads, the garbage collector's helpers), from
 * /proc/PID/task/TID/schedstat; the coarser /proc/PID/stat total, as `main`, where that cannot be read.
 */
export function threadCpuSeconds(pid: number): { main: number; others: number } {
  try {
    let main = 0;
    let others = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        const nanos = Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
        if (task === String(pid)) main += nanos;
        else others += nanos;
      } catch {} // a thread that just ended
    }
    return { main: main / 1e9, others: others / 1e9 };
  } catch {
    return { main: cpuSeconds(pid), others: 0 };
  }
}

export async function runBinary(args: string[], env: Record<string, string>) {
  const started = performance.now();
  const child = Bun.spawn([requireBinary(), ...args], { env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr, ms: performance.now() - started };
}

/** `mcpproxy serve` over stdio with a real SDK client; `pid` is the proxy's. */
export async function startProxyStdio(
  configPath: string,
  dataDir: string,
  env: Record<string, string>,
  /** Another build than dist/mcpproxy (a before and after in one run). */
  binary = requireBinary(),
  /** Its working directory (the caller's when absent); npx looks for packages from there. */
  cwd?: string,
  /** More serve flags (`--standalone`). */
  args: string[] = [],
) {
  const transport = new StdioClientTransport({
    command: binary,
    args: ["serve", "--config", configPath, "--data-dir", dataDir, ...args],
    env,
    ...(cwd ? { cwd } : {}),
    stderr: "pipe",
  });
  transport.stderr?.on("data", () => {});
  const client = new Client({ name: "mcpproxy-bench", version: "1.0.0" });
  await client.connect(transport);
  return { client, pid: transport.pid ?? 0, close: () => client.close() };
}

/**
 * A clean environment for the proxy under test, plus the caller's MCPPROXY_* settings and
 * OPENAI_API_KEY, so `MCPPROXY_EMBEDDER=HF MCPPROXY_HF_MODEL=DIR npm run eval` measures that embedder.
 */
export function benchEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const passed = Object.entries(process.env).filter(
    ([key, value]) => value !== undefined && (key.startsWith("MCPPROXY_") || key === "OPENAI_API_KEY"),
  ) as [string, string][];
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    MCPPROXY_LOG_LEVEL: "warn",
    ...Object.fromEntries(passed),
    ...extra,
  };
}
