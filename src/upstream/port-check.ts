import type { ServerConfig } from "../config/parse-server.ts";
import { ProxyError } from "../errors.ts";
import { connectFailure } from "./upstream-errors.ts";

/**
 * A bare TCP connect to an HTTP server's host and port, made before retrying a server that failed:
 * when nothing accepts connections there, the retry fails at once without building a client, a
 * transport and a version probe (about 2 ms of CPU each; a config with thousands of dead servers
 * retries them all the time). Only a refusal is conclusive: anything else (the port answers, a
 * timeout, a name that does not resolve, a proxy in the way) leaves the decision to the full connect.
 */

/** Fails with UPSTREAM_CONNECT_FAILED when nothing accepts connections at an HTTP server's port. */
export async function checkPort(server: ServerConfig): Promise<void> {
  if (server.transport === "stdio") return;
  const refused = await portRefusal(server.url, server.timeoutMs);
  if (refused) {
    throw new ProxyError("UPSTREAM_CONNECT_FAILED", connectFailure(server, refused, ""), { cause: refused });
  }
}

/** Long enough for a handshake across the world; a silent host is the full connect's to time out. */
const MAX_CHECK_MS = 3_000;

/** Why nothing can be reached at `url`'s host and port (an error coded ECONNREFUSED), or undefined to connect as usual. */
export async function portRefusal(
  url: string,
  timeoutMs: number,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<Error | undefined> {
  // Through a proxy, what answers is the proxy: the server's own port says nothing.
  if (usesProxy(env)) return undefined;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return undefined;
  }
  const hostname = target.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = Number(target.port || (target.protocol === "https:" ? 443 : 80));
  const opened = Bun.connect({ hostname, port, socket: { data() {} } });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), Math.min(MAX_CHECK_MS, timeoutMs));
  });
  try {
    const outcome = await Promise.race([
      opened.then(
        (socket) => {
          socket.end();
          return "open" as const;
        },
        (error: unknown) => error,
      ),
      timedOut,
    ]);
    if (outcome === "timeout") {
      // Closed when it opens after all; the full connect decides.
      opened.then((socket) => socket.end()).catch(() => undefined);
      return undefined;
    }
    if (outcome === "open" || (outcome as { code?: unknown })?.code !== "ECONNREFUSED") return undefined;
    const refused = new Error(
      `ECONNREFUSED: nothing accepts connections at ${target.host} (the server is not running, or the URL's port is wrong)`,
    );
    Object.assign(refused, { code: "ECONNREFUSED" });
    return refused;
  } finally {
    clearTimeout(timer);
  }
}

/** Whether fetch goes through a proxy the environment names (Bun's fetch honours these). */
function usesProxy(env: Readonly<Record<string, string | undefined>>): boolean {
  for (const name of ["http_proxy", "https_proxy", "all_proxy"]) {
    if (env[name] || env[name.toUpperCase()]) return true;
  }
  return false;
}
