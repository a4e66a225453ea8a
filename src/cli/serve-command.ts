import { type CleanupStack, createCleanupStack } from "../app/cleanup-stack.ts";
import { refreshCatalog, summarizeRefresh } from "../app/refresh-catalog.ts";
import type { ResolvedConfig, SettingOverrides } from "../config/load-config.ts";
import { describeError } from "../errors.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { UpstreamTool } from "../index/tool-document.ts";
import type { Logger } from "../log.ts";
import { createHttpApp } from "../server/http-app.ts";
import { startHttpServer } from "../server/http-server.ts";
import { createProxyServer, type ProxyServerDeps } from "../server/proxy-server.ts";
import { startStdioServer } from "../server/stdio-server.ts";
import { type Ancestry, resolveAncestry } from "../upstream/proxy-ancestry.ts";
import { createUpstreamPool, type UpstreamPool } from "../upstream/upstream-pool.ts";
import {
  COMMON_OPTIONS,
  type Command,
  commandLogger,
  loadCommandConfig,
  openCommandCatalog,
  ttyEmbedProgress,
} from "./command.ts";

/** How long a search on a first run (no saved index) waits for the first indexing pass. */
export const FIRST_INDEXING_WAIT_MS = 15_000;

export const serveCommand: Command = {
  name: "serve",
  summary:
    "Run the proxy: serve retrieve_tools and call_tool to an MCP client over stdio (default) or HTTP,\n" +
    "answering from the saved index at once while upstream servers connect in the background. Over HTTP,\n" +
    "streamable HTTP is at /mcp and the legacy SSE transport at /sse (both on every HTTP transport).",
  usage:
    "mcpproxy serve [--config FILE] [--transport stdio|streamable-http|sse] [--host H] [--port P] [--data-dir DIR]",
  options: {
    transport: {
      type: "string",
      help: "--transport T      stdio (default), streamable-http (alias http) or sse; or MCPPROXY_TRANSPORT",
    },
    host: {
      type: "string",
      help: "--host H           HTTP bind address (default 127.0.0.1); or MCPPROXY_HOST",
    },
    port: {
      type: "string",
      help: "--port P           HTTP port, 0 for any free one (default 8000); or MCPPROXY_PORT",
    },
    ...COMMON_OPTIONS,
  },
  async run(values) {
    const overrides: SettingOverrides = {};
    if (typeof values.transport === "string")
      overrides.transport = { value: values.transport, flag: "--transport" };
    if (typeof values.host === "string") overrides.host = { value: values.host, flag: "--host" };
    if (typeof values.port === "string") overrides.port = { value: values.port, flag: "--port" };
    const config = loadCommandConfig(values, overrides);
    const ancestry = resolveAncestry(config.configPath, process.env);
    return serve(config, ancestry, commandLogger(config));
  },
};

async function serve(config: ResolvedConfig, ancestry: Ancestry, logger: Logger): Promise<number> {
  const cleanup = createCleanupStack();
  let failures: string[];
  try {
    const reason = await run(config, ancestry, logger, cleanup);
    logger.info(`shutting down (${reason})`);
  } finally {
    // Also after a failed start (a busy port): children already spawned must not outlive us.
    failures = await cleanup.run();
    for (const failure of failures) logger.error(`shutdown: ${failure}`);
  }
  return failures.length > 0 ? 1 : 0;
}

/** Sets everything up (teardown steps go on `cleanup`) and resolves with why it should stop. */
async function run(
  config: ResolvedConfig,
  ancestry: Ancestry,
  logger: Logger,
  cleanup: CleanupStack,
): Promise<string> {
  const catalog = await openCommandCatalog(config, logger, {
    reset: config.resetData,
    onEmbedProgress: ttyEmbedProgress(),
  });
  cleanup.defer("close the catalog", () => catalog.close());
  cleanup.defer("save the index", () => catalog.persist());
  const savedTools = catalog.size();

  const pool = createUpstreamPool({
    servers: config.servers,
    logger: logger.child("upstream"),
    ancestry: ancestry.forChildren,
    maxMessageBytes: config.maxMessageBytes,
    onToolsChanged: (server, tools) => void resync(catalog, server, tools, logger),
  });
  cleanup.defer("disconnect upstream servers", () => pool.close());
  pool.startRetrying();
  const indexing = reportRefresh(config, catalog, pool, logger);
  const deps: ProxyServerDeps = {
    catalog,
    pool,
    topK: config.topK,
    minScore: config.minScore,
    logger,
    // Bounded: one server that hangs until its connect timeout must not hold up every first search.
    firstIndexing: savedTools === 0 ? Promise.race([indexing, Bun.sleep(FIRST_INDEXING_WAIT_MS)]) : undefined,
  };

  let clientGone: Promise<unknown> = new Promise(() => {});
  if (config.transport === "stdio") {
    const stdio = await startStdioServer(createProxyServer(deps), config.maxMessageBytes);
    cleanup.defer("stop the stdio server", () => stdio.close());
    clientGone = stdio.closed;
    logger.info(`serving MCP over stdio; ${savedTools} tools in the saved index`);
  } else {
    const app = createHttpApp({
      bindHost: config.host,
      logger,
      createServer: () => createProxyServer(deps),
      health: () => healthOf(catalog, pool),
      ancestry,
      configPath: config.configPath,
    });
    const http = startHttpServer(app, config.host, config.port);
    cleanup.defer("stop the HTTP server", () => http.close());
    logger.info(
      `serving MCP at ${http.url}; legacy SSE clients at ${http.url.replace(/\/mcp$/, "/sse")}; ` +
        `${savedTools} tools in the saved index`,
    );
  }

  const signalled = new Promise<string>((resolve) => {
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
      process.once(signal, () => resolve(signal));
  });
  return Promise.race([clientGone.then(() => "the client disconnected"), signalled]);
}

async function reportRefresh(
  config: ResolvedConfig,
  catalog: ToolCatalog,
  pool: UpstreamPool,
  logger: Logger,
) {
  const enabled = config.servers.filter((server) => server.enabled);
  if (enabled.length === 0) {
    logger.warn(
      `no enabled servers in ${config.configPath}: add some under "mcpServers"; ` +
        `retrieve_tools answers from the ${catalog.size()} tools of the saved index only`,
    );
  }
  try {
    const report = await refreshCatalog(config, catalog, pool, { logger });
    if (enabled.length === 0) return;
    logger.info(summarizeRefresh(report));
    const reached = report.servers.filter((server) => !server.error).length;
    if (reached === 0 && report.toolCount === 0) {
      logger.warn(
        "no upstream server could be reached and there is no saved index: retrieve_tools will find nothing " +
          "until a server is reachable (see the errors above)",
      );
    } else if (reached === 0) {
      logger.warn(
        `no upstream server could be reached; searching the saved index of ${report.toolCount} tools`,
      );
    }
  } catch (error) {
    logger.error(`indexing failed: ${describeError(error)}`);
  }
}

async function resync(catalog: ToolCatalog, server: string, tools: readonly object[], logger: Logger) {
  try {
    const counts = await catalog.syncServer(server, tools as readonly UpstreamTool[]);
    await catalog.persist();
    logger.info(`re-indexed ${server} after its tool list changed`, { ...counts });
  } catch (error) {
    logger.error(`re-indexing ${server} failed: ${describeError(error)}`);
  }
}

function healthOf(catalog: ToolCatalog, pool: UpstreamPool) {
  return {
    tools: catalog.size(),
    servers: pool.status().map((s) => ({
      name: s.name,
      state: s.state,
      tools: s.toolCount,
      ...(s.error ? { error: s.error.split("\n")[0] } : {}),
    })),
  };
}
