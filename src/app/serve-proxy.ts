import { removeStaleTemps } from "../atomic-file.ts";
import { upstreamAuth } from "../auth/upstream-auth.ts";
import type { ResolvedConfig } from "../config/load-config.ts";
import { describeError } from "../errors.ts";
import { rerankerFor } from "../index/llm-rerank.ts";
import { createPrincipalQuotas } from "../limits/principal-quotas.ts";
import type { Logger } from "../log.ts";
import { createAllTools } from "../routing/all-tools.ts";
import { createSessionRegistry } from "../routing/session-registry.ts";
import { createRequestStateSeal, stateKeyToRead } from "../security/request-state.ts";
import { createArgumentValidator } from "../server/calls/argument-validator.ts";
import { fallbackPolicy } from "../server/calls/fallback-retry.ts";
import { createParkedCalls, DEFAULT_MAX_PARKED } from "../server/calls/parked-calls.ts";
import { createChangeFeed } from "../server/federation/change-feed.ts";
import { passthroughNaming } from "../server/federation/federated-names.ts";
import { createResourceSubscriptions } from "../server/federation/resource-subscriptions.ts";
import { upstreamMessages } from "../server/federation/upstream-messages.ts";
import type { ProxyServerDeps } from "../server/proxy-deps.ts";
import { keptResults } from "../server/results/result-spill.ts";
import { createSharedResults, sharedBoundsOf } from "../server/results/shared-results.ts";
import { createClientSessions } from "../server/transport/client-sessions.ts";
import { checkListenAddress } from "../server/transport/http-server.ts";
import { createListenAdmission } from "../server/transport/listen-admission.ts";
import { openCallStats } from "../stats/call-stats.ts";
import { usagePriors } from "../stats/usage-prior.ts";
import { keptResultsOf } from "../store/postgres/kept-results.ts";
import { startTracing } from "../tracing/start-tracing.ts";
import { createClientPriority } from "../upstream/client-priority.ts";
import type { Ancestry } from "../upstream/proxy-ancestry.ts";
import { upstreamBounds } from "../upstream/upstream-bounds.ts";
import { createUpstreamPool, type UpstreamPool } from "../upstream/upstream-pool.ts";
import { watchAllTools } from "./all-tools-watch.ts";
import { createCatalogHandle } from "./catalog-handle.ts";
import { type CatalogSync, createCatalogSync } from "./catalog-sync.ts";
import { type CleanupStack, createCleanupStack } from "./cleanup-stack.ts";
import { dataDirFailure, dataDirForServe } from "./data-dir-access.ts";
import { startDescriptionWatch } from "./description-watch.ts";
import { startIndexKeeper } from "./index-keeper.ts";
import { joinTeam } from "./join-team.ts";
import { startListWatch } from "./list-watch.ts";
import { openCatalog, ttyEmbedProgress } from "./open-catalog.ts";
import { passthroughConfig } from "./passthrough.ts";
import { servedProfiles } from "./profile-endpoints.ts";
import { reviewListed } from "./refresh-catalog.ts";
import { serveClients } from "./serve-clients.ts";
import { createServerManager, type ServerManager } from "./server-manager.ts";
import { settleMemoryAfter } from "./settle-memory.ts";
import { startPlugins } from "./start-plugins.ts";
import { type StopSignals, watchStopSignals } from "./stop-signals.ts";
import { openStoreStats } from "./store-stats-limits.ts";
import { startToolListHints, type ToolListHints } from "./tool-list-hints.ts";

export interface ServeOptions {
  /** `--passthrough SERVER` (passthrough.ts). */
  passthrough?: string | undefined;
  /** `--profile NAME`: stdio serves this profile of `mcpproxy.profiles` (src/profiles/). */
  profile?: string | undefined;
  /** Over HTTP: told the MCP endpoint's URL once it listens (the background service records it). */
  onListening?: ((url: string) => void) | undefined;
  /** The file this serve's log goes to when that is not `mcpproxy.logFile` (the service's log): the console tails it. */
  logPath?: string | undefined;
}

/** How long a search on a first run (no saved index) waits for the first indexing pass. */
const FIRST_INDEXING_WAIT_MS = 15_000;

/**
 * `mcpproxy serve`: the catalog, the upstream pool, the plugins and the MCP server over stdio or
 * HTTP, set up in that order and torn down in reverse. Resolves to the exit code.
 */
export async function serveProxy(
  config: ResolvedConfig,
  ancestry: Ancestry,
  logger: Logger,
  /** Reads the config again as it was read at start (the same flags and environment); `text` instead of the file. */
  reloadConfig: (text?: string) => ResolvedConfig = () => config,
  options: ServeOptions = {},
): Promise<number> {
  if (options.passthrough !== undefined) {
    const name = options.passthrough;
    const load = reloadConfig;
    config = passthroughConfig(config, name);
    reloadConfig = (text) => passthroughConfig(load(text), name);
  }
  const cleanup = createCleanupStack();
  // Aborted the moment serve stops: servers are ended at once, not on the polite schedule, because
  // the client gives us no more time than that schedule takes (child-process-transport.ts).
  const stopping = new AbortController();
  let failures: string[];
  try {
    const reason = await run(config, ancestry, logger, cleanup, reloadConfig, stopping.signal, options);
    logger.info(`shutting down (${reason})`);
  } catch (error) {
    // A write to the data dir that failed on the way up (a disk that filled since the probe, the
    // HTTP token of a read-only dir): said as such, not as an unexpected error.
    throw dataDirFailure(error, config.dataDir) ?? error;
  } finally {
    stopping.abort();
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
  reloadConfig: (text?: string) => ResolvedConfig,
  stopSignal: AbortSignal,
  options: ServeOptions,
): Promise<string> {
  // A busy port or a wrong --host is said first, before any server is started.
  if (config.transport !== "stdio") await checkListenAddress(config.host, config.port);
  let signals: StopSignals | undefined;
  // Deferred first, so run last: a second Ctrl-C during the teardown does not cut it short.
  cleanup.defer("stop listening for signals", () => signals?.dispose());
  // Sent last of all: the spans of calls that end while everything else stops go too.
  const tracing = await startTracing(config.traces, logger.child("traces"));
  cleanup.defer("send the last spans", () => tracing?.exporter.close());
  const plugins = await startPlugins(config, logger);
  cleanup.defer("dispose the plugins", async () => {
    const failures = await plugins.dispose();
    if (failures.length > 0) throw new Error(failures.join("; "));
  });
  // Probed once: a read-only dir is served from without writing, a full one said plainly.
  const isDataDirWritable = dataDirForServe(config, logger);
  removeStaleTemps(config.configPath); // what a killed edit of the config left
  // A team deployment's shared state (src/store/); on one machine, the data dir's lock alone.
  const team = await joinTeam(config, reloadConfig, logger, cleanup, isDataDirWritable);
  const { store, lock, logins } = team;
  config = team.config;
  // Servers change at run time (upstream_servers, an edited config): who asks, asks the manager.
  let manager: ServerManager | undefined;
  const servers = () => manager?.servers() ?? config.servers;
  const catalog = createCatalogHandle(
    await openCatalog(config, logger, {
      reset: config.resetData && lock.isHeld,
      readOnly: !lock.isHeld,
      onEmbedProgress: ttyEmbedProgress(),
      servers,
      // Read once the first request is answered (startUpstreams), or by a search that comes first.
      deferIndex: true,
    }),
  );
  cleanup.defer("close the catalog", () => catalog.close());
  cleanup.defer("save the index", () => catalog.persist());
  const savedTools = catalog.size();
  // Counted in memory and written once a second; only the proxy that holds the data dir writes.
  const stats =
    !config.stats || !isDataDirWritable
      ? undefined
      : store
        ? await openStoreStats(store, logger.child("stats"))
        : openCallStats(config.dataDir, { persist: lock.isHeld, logger: logger.child("stats") });
  cleanup.defer("save the call statistics", () => stats?.close());
  // prom-client (and the node:cluster, http, zlib, v8 it imports) only when /metrics is on.
  const metrics = config.metrics
    ? (await import("../server/observe/metrics.ts")).createMetrics({
        indexedTools: () => catalog.size(),
        serverStates: () => pool.status(),
        toolLimit: config.metricsToolLimit,
      })
    : undefined;
  const sessions = createSessionRegistry(logger.child("routing"));
  const naming = options.passthrough !== undefined ? passthroughNaming(options.passthrough) : undefined;
  // Who wants which resource's updates, legacy sessions and listen streams alike (the pool is
  // made below: these run only once clients come).
  const subscriptions = createResourceSubscriptions({
    pool: { request: (server, request, schema) => pool.request(server, request, schema) },
    logger: logger.child("subscriptions"),
    naming,
  });
  const clients = createClientSessions(subscriptions);
  const changes = createChangeFeed(clients, logger.child("listen"));

  let sync: CatalogSync | undefined;
  /** A team deployment: tool list changes told to and heard from the other replicas (tool-list-hints.ts). */
  let hints: ToolListHints | undefined;
  let indexing: Promise<void> = Promise.resolve();
  /** The first indexing pass is over (until then, what search can find is about to change). */
  let isIndexed = false;
  // Run after the pool closed: the first pass, cut short, settles before the index is saved and closed.
  cleanup.defer("end the first indexing pass", () => indexing);
  // The clients' requests come first: the first pass over the servers slows down while they ask.
  const clientPriority = createClientPriority();
  const pool = createUpstreamPool({
    servers: config.servers,
    logger: logger.child("upstream"),
    ancestry: ancestry.forChildren,
    ...upstreamBounds(config),
    healthCheckMs: config.healthCheckMs,
    callTimeoutMs: config.callTimeoutMs,
    maxCallMs: config.maxCallMs,
    onToolsChanged: (server, tools, listed) => {
      hints?.observe(server, tools);
      if (listed) reviewListed(catalog, { server, listed });
      const resynced = sync?.resync(server, tools);
      // In passthrough the server's tools are the client's tool list: tell every client it changed.
      if (server === options.passthrough) void resynced?.then(() => changes.toolsChanged());
    },
    auth: upstreamAuth(config.dataDir, logins),
    stopSignal,
    eras: catalog.eras,
    instructions: catalog.instructions,
    gateOf: team.limits?.gateOf,
    // Not on a first run: its searches wait for the pass (serve-clients: firstIndexing), whose
    // width they would take away.
    clientPriority: savedTools > 0 ? clientPriority : undefined,
    clientSide: upstreamMessages({
      sessions: clients,
      changes,
      logger: logger.child("relay"),
      relayTimeoutMs: config.maxCallMs,
      isHeld: (server) => catalog.capabilities?.serverHold(server),
      naming,
    }),
  });
  cleanup.defer("disconnect upstream servers", () => pool.close());
  hints = store ? startToolListHints(store, pool, logger.child("store")) : undefined;
  cleanup.defer("stop hearing of other replicas' tool lists", () => hints?.stop());
  // In passthrough the other servers are never started, whatever the index knows of them.
  const startUnindexed = options.passthrough === undefined;
  sync = createCatalogSync({
    ...{ config, servers, catalog, pool, logger, plugins, sessions, startUnindexed },
    // In passthrough the overridden tools are the client's own list.
    onOverridesChanged: options.passthrough !== undefined ? () => changes.toolsChanged() : undefined,
  });
  manager = createServerManager({
    config,
    load: reloadConfig,
    pool,
    sync,
    catalog,
    logger: logger.child("config"),
    startUnindexed,
    registry: team.registry,
  });
  /**
   * Connecting the upstreams and the first indexing pass. Over HTTP they start at once; over stdio on
   * the first request other than server/discover (or after a quiet while: serve-clients.ts): a 2026-07-28 client in
   * `auto` mode first starts a throw-away mcpproxy just to ask `server/discover`, and that one must
   * not start every upstream for nothing. The proxy's own tools/list and server/discover answer
   * without them.
   */
  let started: ((value: undefined) => void) | undefined;
  const upstreamsStarted = new Promise<undefined>((resolve) => {
    started = resolve;
  });
  const startUpstreams = () => {
    if (!started) return;
    started(undefined);
    started = undefined;
    // After the answer to the request that got here (a timer runs once its handling is done).
    setTimeout(() => {
      catalog.loadIndex().catch((error: unknown) => {
        logger.warn(`reading the search index failed: ${describeError(error)}`);
      });
    }, 0);
    pool.startRetrying();
    indexing = sync?.indexAll() ?? indexing;
    void indexing.then(() => {
      isIndexed = true;
    });
  };
  cleanup.defer(
    "stop keeping the index",
    startIndexKeeper({
      lock,
      dataDir: config.dataDir,
      catalog,
      sync,
      logger,
      openWritable: () => openCatalog(config, logger, { servers }),
      takeOverMessage: team.takeOverMessage,
      onTakenOver: () => stats?.startSaving(),
      answerTeam: team.answerIndexRequests,
    }),
  );
  cleanup.defer("stop watching the config", manager.watch());
  // In passthrough the client sees the server's own tools, not retrieve_tools.
  const searchable =
    options.passthrough === undefined
      ? startDescriptionWatch({
          ...{ catalog, servers, changes, logger: logger.child("description") },
          isStarting: () => !isIndexed || pool.isStarting(),
        })
      : undefined;
  cleanup.defer("stop watching what search can find", () => searchable?.stop());
  // What start-up compiled and allocated for once, handed back when the first indexing pass is over
  // and retrieve_tools' description has followed it (the last of start-up's work: settle-memory.ts).
  cleanup.defer(
    "stop waiting to hand back start-up's memory",
    settleMemoryAfter(
      upstreamsStarted.then(() => indexing),
      { logger: logger.child("memory"), isQuiet: () => searchable?.isSettled() ?? true },
    ),
  );
  cleanup.defer(
    "stop watching the federated lists",
    startListWatch({ pool, approvals: () => catalog.capabilities, changes, logger }),
  );
  /** Listen streams over this pool (the whole one, or a profile's view of it). */
  const listensOver = (over: UpstreamPool) =>
    createListenAdmission({
      subscriptions,
      pool: over,
      serverHold: (server) => catalog.capabilities?.serverHold(server),
      logger: logger.child("listen"),
      naming,
    });
  const listens = listensOver(pool);
  // Calls of 2026 clients parked while their 2025 server waits for input (parked-calls.ts).
  const parked = createParkedCalls({
    waitMs: config.inputWaitMs,
    maxParked: DEFAULT_MAX_PARKED,
    logger: logger.child("input"),
  });
  cleanup.defer("cancel the calls waiting for input", () => parked.close());
  // With a shared store, 2026-07-28 clients' results are kept there too: any replica reads them.
  const sharedResults =
    store && createSharedResults(keptResultsOf(store), sharedBoundsOf(config), logger.child("results"));
  const results = keptResults(config, sharedResults);
  if (results) {
    // Expired results are dropped when the store is touched; this frees them on an idle proxy too.
    const sweeping = setInterval(
      () => {
        results.store.sweep();
        void results.shared?.sweep();
      },
      Math.min(config.resultTtlMs, 60_000),
    );
    sweeping.unref();
    cleanup.defer("stop sweeping kept results", () => clearInterval(sweeping));
  }
  // `--routing all`: the list and its alwaysLoad marks, looked at again every second (all-tools.ts).
  const allTools =
    config.routing === "all" && options.passthrough === undefined
      ? createAllTools({ alwaysLoad: config.alwaysLoad, stats })
      : undefined;
  if (allTools)
    cleanup.defer("stop watching the tool list", watchAllTools(allTools, catalog, changes, logger));
  const deps: ProxyServerDeps = {
    catalog,
    pool,
    logger,
    plugins,
    firstIndexing:
      (options.passthrough !== undefined ? catalog.names(options.passthrough).length : savedTools) === 0
        ? upstreamsStarted.then(() => Promise.race([indexing, Bun.sleep(FIRST_INDEXING_WAIT_MS)]))
        : undefined,
    search: {
      topK: config.topK,
      minScore: config.minScore,
      adaptiveTopK: config.adaptiveTopK,
      prior: config.learnedPrior && stats ? usagePriors(stats) : undefined,
      rerank: rerankerFor(config.search, logger, stats?.recordRerank),
      searchable,
    },
    routing: {
      mode: config.routing,
      allTools,
      toolsLimit: config.toolsLimit,
      sessions,
      passthrough: options.passthrough,
    },
    calls: {
      arguments: createArgumentValidator(catalog, {
        unchecked: new Set(
          config.servers.filter((server) => server.validateArguments === false).map((s) => s.name),
        ),
        logger,
      }),
      fallback: fallbackPolicy(servers, config.autoRetryFallback),
      quotas: config.httpAuth
        ? createPrincipalQuotas(config.httpAuth.callsPerMinute, undefined, undefined, team.limits?.quotaGate)
        : undefined,
      inputRounds: {
        seal: createRequestStateSeal(
          store?.requestStateKey() ?? (isDataDirWritable ? config.dataDir : stateKeyToRead(config.dataDir)),
          config.inputWaitMs,
        ),
        parked,
      },
      results,
    },
    servers: { manager, readOnly: config.readOnly, configPath: config.configPath },
    clients,
    observe: { stats, metrics, traces: tracing?.tracer },
  };

  const profiles = servedProfiles({ config, deps, servers, listensOver, logger });

  const { clientGone } = await serveClients({
    config,
    deps,
    profiles,
    profile: options.profile,
    changes,
    listens,
    listensOver,
    startUpstreams,
    clientPriority,
    sessions,
    ancestry,
    isDataDirWritable,
    savedTools,
    cleanup,
    logger,
    onListening: options.onListening,
    logPath: config.logFile || options.logPath,
    registry: team.registry?.servers,
    configured: servers,
  });

  const stop = watchStopSignals();
  signals = stop;
  const signalled = new Promise<string>((resolve) => {
    stop.signal.addEventListener("abort", () => resolve(stop.received ?? "a signal"), { once: true });
  });
  return Promise.race([clientGone.then(() => "the client disconnected"), signalled]);
}
