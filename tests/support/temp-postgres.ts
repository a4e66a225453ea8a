import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../helpers.ts";

/**
 * A throw-away PostgreSQL server for the shared-store tests: a cluster made with `initdb` in a
 * temporary directory, run in the foreground on 127.0.0.1 and a free port, removed at the end.
 * It needs Debian's `postgresql` package (the binaries in /usr/lib/postgresql/<version>/bin); a test
 * that needs it skips with POSTGRES_MISSING where it is not installed. PostgreSQL refuses to run as
 * root, so under root (CI) the cluster belongs to the package's `postgres` user.
 */
export interface TempPostgres {
  /** postgres://… of the test database, with the cluster's only (trusted) role. */
  url: string;
  port: number;
  dir: string;
  /** Stops the server (a fast shutdown: what was committed is on disk) and starts it again on the same port. */
  restart(options?: { downMs?: number }): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  cleanup(): Promise<void>;
}

export const POSTGRES_MISSING =
  "skipping the shared-store tests: PostgreSQL is not installed (Debian: apt-get install postgresql)\n";

/** The directory holding initdb and postgres, or undefined. */
export function postgresBinDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], "bin");
  }
  const onPath = Bun.which("initdb");
  return onPath ? join(onPath, "..") : undefined;
}

const isRoot = process.getuid?.() === 0;

/**
 * Runs a PostgreSQL program as the user that may run it (root may not). setpriv execs the program
 * itself (no process in between), so a signal sent to the child reaches postgres.
 */
function asOwner(command: string[]): string[] {
  return isRoot ? ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", ...command] : command;
}

async function run(command: string[]): Promise<void> {
  const child = Bun.spawn(asOwner(command), { stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([
    child.exited,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  if (code !== 0) throw new Error(`${command.join(" ")} exited ${code}: ${out}${err}`);
}

export async function startTempPostgres(): Promise<TempPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(POSTGRES_MISSING);
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-pg-"));
  if (isRoot) {
    const chown = Bun.spawnSync(["chown", "-R", "postgres", dir]);
    if (chown.exitCode !== 0) throw new Error(`chown ${dir}: ${chown.stderr.toString()}`);
  }
  const data = join(dir, "data");
  await run([join(bin, "initdb"), "-D", data, "-U", "mcpproxy", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const port = await freePort();
  let child: ReturnType<typeof Bun.spawn> | undefined;
  let log = "";

  const start = async () => {
    log = "";
    child = Bun.spawn(
      asOwner([
        join(bin, "postgres"),
        ...["-D", data, "-p", String(port), "-k", dir],
        ...["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200"],
      ]),
      { stdout: "ignore", stderr: "pipe" },
    );
    void (async () => {
      const stream = child?.stderr;
      if (!stream || typeof stream === "number") return;
      const decoder = new TextDecoder();
      for await (const chunk of stream) log += decoder.decode(chunk);
    })();
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (log.includes("ready to accept connections")) return;
      if (child.exitCode !== null) throw new Error(`postgres exited ${child.exitCode}: ${log}`);
      if (Date.now() > deadline) throw new Error(`postgres did not start in 30 s: ${log}`);
      await Bun.sleep(50);
    }
  };
  const stop = async () => {
    if (!child || child.exitCode !== null) return;
    child.kill("SIGINT"); // a fast shutdown: clients are disconnected, committed work is kept
    // Bounded: a shutdown held up by something odd becomes an immediate one (SIGQUIT) after 10 s.
    const late = setTimeout(() => child?.kill("SIGQUIT"), 10_000);
    await child.exited;
    clearTimeout(late);
  };
  await start();
  await run([join(bin, "createdb"), "-h", "127.0.0.1", "-p", String(port), "-U", "mcpproxy", "mcpproxy"]);
  return {
    url: `postgres://mcpproxy@127.0.0.1:${port}/mcpproxy`,
    port,
    dir,
    start,
    stop,
    async restart(options = {}) {
      await stop();
      if (options.downMs) await Bun.sleep(options.downMs);
      await start();
    },
    async cleanup() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
