import { createProxyServer } from "../server/proxy-server.ts";
import type { ListenAdmission } from "../server/transport/listen-admission.ts";
import { startStdioServer } from "../server/transport/stdio-server.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
import type { HttpClients } from "./serve-http.ts";

/**
 * The half of `serve` that faces the clients, once the proxy is assembled (serve-proxy.ts): over
 * stdio one client per process, whose leaving ends serve; over HTTP serve-http.ts.
 */

/** Said once when someone starts `serve` by hand on a terminal, where stdio MCP looks like a hang. */
const TERMINAL_HINT =
  "mcpproxy serve speaks MCP (JSON-RPC) on stdin/stdout, for an MCP client to start it: " +
  'give your client {"command": "mcpproxy", "args": ["serve"]}, try it with ' +
  "`npx @modelcontextprotocol/inspector mcpproxy serve`, or use --transport http. Ctrl-C stops it.\n";

/** Over stdio, the upstreams start at the first request other than server/discover, or after this long. */
const QUIET_START_MS = 3_000;

export interface ServedClients extends HttpClients {
  /** `serve --profile NAME` over stdio. */
  profile: string | undefined;
  listensOver: (pool: UpstreamPool) => ListenAdmission;
}

/**
 * Serves the clients; resolves once they are served, with `clientGone`, which settles when the
 * stdio client leaves (never over HTTP, where serve ends on a signal).
 */
export async function serveClients(served: ServedClients): Promise<{ clientGone: Promise<unknown> }> {
  const { config, deps, profiles, profile, changes, listens, listensOver, startUpstreams } = served;
  const { savedTools, cleanup, logger } = served;
  const routing = config.routing === "call-tool" ? "" : `; ${config.routing} routing`;
  if (config.transport === "stdio") {
    const scope = profile !== undefined ? profiles.depsOf(profile) : deps;
    // One client per process: what it is told is told to no one else.
    const stdio = startStdioServer((era) => createProxyServer(scope, era, "everyone"), {
      maxRequestBytes: config.maxRequestBytes,
      logger,
      onRequest: (method) => {
        served.clientPriority.requested();
        if (method !== "server/discover") startUpstreams();
      },
      changes,
      listens: profile !== undefined ? listensOver(scope.pool) : listens,
    });
    // A client slow to send its first request (or serve started by hand) still gets its servers
    // started in the background; a probe's throw-away process is gone long before this.
    const quiet = setTimeout(startUpstreams, QUIET_START_MS);
    cleanup.defer("stop waiting for the first request", () => clearTimeout(quiet));
    cleanup.defer("stop the stdio server", () => stdio.close());
    const scoped = profile !== undefined ? ` (profile ${profile})` : "";
    logger.info(`serving MCP over stdio${scoped}; ${savedTools} tools in the saved index${routing}`);
    if (process.stdin.isTTY) process.stderr.write(TERMINAL_HINT);
    return { clientGone: stdio.closed };
  }
  // Hono, jose and the status pages: loaded by a serve that listens on HTTP, not by one on stdio.
  return (await import("./serve-http.ts")).serveHttp(served, routing);
}
