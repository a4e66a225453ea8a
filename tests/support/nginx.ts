import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, ROOT, watchOutput } from "../helpers.ts";

/**
 * nginx in front of local replicas, with the configuration that ships (deploy/nginx/nginx.conf):
 * what a test proves about routing is what docker-compose runs. The shipped file is rewritten only
 * where a local run must differ, and each rewrite must find its line, so the two cannot drift apart
 * unnoticed: the replicas' `server mcpproxy-N:8080` lines become the given ports, `listen` a
 * loopback port, and pid and logs go to a temporary directory.
 */
export const NGINX_CONF = join(ROOT, "deploy", "nginx", "nginx.conf");

/** The nginx binary (Debian's `nginx` package puts it in /usr/sbin, often not on a user's PATH). */
export const NGINX = Bun.which("nginx") ?? (existsSync("/usr/sbin/nginx") ? "/usr/sbin/nginx" : undefined);

export const NGINX_MISSING = "nginx is not installed (Debian: apt-get install nginx; .ci/run installs it)";

export interface NginxConfigOptions {
  /** Where the replicas listen: `host:port`, in the order of the shipped `server` lines. */
  upstreams: string[];
  /** The address nginx listens on (`127.0.0.1:PORT`). */
  listen: string;
  /** The directory for pid, logs and nginx's temporary files. */
  dir: string;
}

/** Replaces what `pattern` matches (it must match at least once) with `replace`. */
function rewrite(text: string, pattern: RegExp, replace: (match: string) => string, what: string): string {
  if (!pattern.test(text))
    throw new Error(`${NGINX_CONF} has no ${what}: update tests/support/nginx.ts with it`);
  pattern.lastIndex = 0;
  return text.replace(pattern, replace);
}

/** The shipped configuration, rewritten for a local run. */
export function renderNginxConfig(shipped: string, options: NginxConfigOptions): string {
  const { dir } = options;
  let conf = rewrite(shipped, /^pid .*;$/m, () => `pid ${join(dir, "nginx.pid")};`, "pid line");
  conf = rewrite(
    conf,
    /^error_log .*;$/m,
    () => `error_log ${join(dir, "error.log")} info;`,
    "error_log line",
  );
  conf = rewrite(
    conf,
    /^(\s*)access_log \S+ (\w+);$/m,
    (line) => line.replace(/access_log \S+/, `access_log ${join(dir, "access.log")}`),
    "access_log line",
  );
  conf = rewrite(
    conf,
    /^(\s*)listen 8080;$/m,
    (line) => line.replace("8080", options.listen),
    "listen 8080 line",
  );
  // Each upstream block lists the replicas in a run of `server mcpproxy-N:8080 …;` lines.
  conf = rewrite(
    conf,
    /^([ \t]*)server mcpproxy-\d+:8080([^;\n]*);\n(?:[ \t]*server mcpproxy-\d+:8080[^;\n]*;\n)*/gm,
    (run) => {
      const [, indent = "", params = ""] = /^([ \t]*)server mcpproxy-\d+:8080([^;\n]*);/.exec(run) ?? [];
      return options.upstreams.map((address) => `${indent}server ${address}${params};\n`).join("");
    },
    "`server mcpproxy-N:8080` lines",
  );
  // Temporary files of request bodies and the like, and the worker's user where nginx runs as root
  // (Debian's build defaults to a group named "nobody", which Debian does not have).
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((kind) => `    ${kind}_temp_path ${join(dir, `${kind}_temp`)};\n`)
    .join("");
  conf = rewrite(conf, /^http \{\n/m, (line) => `${line}${temp}`, "http block");
  if (process.getuid?.() === 0) conf = `user nobody nogroup;\n${conf}`;
  return conf;
}

export interface RunningNginx {
  url: URL;
  port: number;
  dir: string;
  /** The access log so far (the shipped `mcpproxy` format: upstream=, session=, method=). */
  accessLog(): string;
  stop(): Promise<void>;
}

/** Writes the configuration, checks it with `nginx -t` and runs nginx in the foreground. */
export async function startNginx(options: { upstreams: string[] }): Promise<RunningNginx> {
  if (!NGINX) throw new Error(NGINX_MISSING);
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-nginx-"));
  // Workers run as nobody when the test runs as root: they must reach the temporary paths.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const confPath = join(dir, "nginx.conf");
  const conf = renderNginxConfig(readFileSync(NGINX_CONF, "utf8"), {
    upstreams: options.upstreams,
    listen: `127.0.0.1:${port}`,
    dir,
  });
  writeFileSync(confPath, conf);
  const args = ["-p", dir, "-e", join(dir, "error.log"), "-c", confPath];
  const check = Bun.spawnSync([NGINX, ...args, "-t"], { stderr: "pipe" });
  if (check.exitCode !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`nginx -t failed:\n${check.stderr.toString()}`);
  }
  const child = Bun.spawn([NGINX, ...args, "-g", "daemon off;"], { stdout: "ignore", stderr: "pipe" });
  const stderr = watchOutput(child.stderr);
  const url = new URL(`http://127.0.0.1:${port}/`);
  // Ready when it accepts a connection (the answer itself may be an upstream's error).
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await fetch(new URL("/nginx-ready", url)).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`nginx did not start: ${readLog(join(dir, "error.log"))}${stderr.text()}`);
    }
    await Bun.sleep(25);
  }
  return {
    url,
    port,
    dir,
    accessLog: () => readLog(join(dir, "access.log")),
    async stop() {
      // SIGQUIT is nginx's graceful stop; open streams would hold it, so the test's end is SIGTERM.
      child.kill("SIGTERM");
      await child.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function readLog(path: string): string {
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}
