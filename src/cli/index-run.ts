import { mkdirSync } from "node:fs";
import { askServeToIndex, TAKE_WAIT_MS } from "../app/index-requests.ts";
import { type IndexSummary, summarizeIndexing } from "../app/index-summary.ts";
import { openCatalog, ttyEmbedProgress } from "../app/open-catalog.ts";
import { refreshCatalog, type ServerReport } from "../app/refresh-catalog.ts";
import { watchStopSignals } from "../app/stop-signals.ts";
import { upstreamAuth } from "../auth/upstream-auth.ts";
import type { ResolvedConfig } from "../config/load-config.ts";
import { storeLocationOf } from "../config/store-setting.ts";
import { describeError, ProxyError } from "../errors.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import { loadPlugins } from "../plugins/load-plugins.ts";
import { askLeaseHolderToIndex, TAKE_WAIT_MS as STORE_TAKE_WAIT_MS } from "../store/index-requests.ts";
import { openWriterLock, type WriterLock } from "../store/sqlite/writer-lock.ts";
import { resolveAncestry } from "../upstream/proxy-ancestry.ts";
import { upstreamBounds } from "../upstream/upstream-bounds.ts";
import { createUpstreamPool } from "../upstream/upstream-pool.ts";
import type { CommandValues } from "./command.ts";
import { commandLogger, loadCommandConfig } from "./command-config.ts";
import { storeOverrides, withCommandStore } from "./command-store.ts";

/** `mcpproxy index`: what it does once its flags are parsed (its flags and help: index-command.ts). */
export async function runIndexCommand(values: CommandValues, _positionals: string[]): Promise<number> {
  const config = loadCommandConfig(values, storeOverrides(values));
  if (storeLocationOf(config.store).kind !== "local") return indexThroughStore(config, Boolean(values.force));
  const ancestry = resolveAncestry(config.configPath, process.env);
  // The summary below reports every server; the log adds only errors unless asked for debug.
  const logger = commandLogger({ ...config, logLevel: config.logLevel === "debug" ? "debug" : "error" });
  // Not run here, but checked: a config whose plugins cannot load is refused as serve refuses it.
  await loadPlugins(config.plugins, { strict: config.strictPlugins, logger });
  const enabled = config.servers.filter((server) => server.enabled);
  if (enabled.length === 0) {
    throw new ProxyError(
      "CONFIG_INVALID",
      `No enabled servers in ${config.configPath}: add some under "mcpServers" (there is nothing to index).`,
    );
  }
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const reset = Boolean(values.force) || config.resetData;
  const lock = openWriterLock(config.dataDir, "index");
  try {
    const delegated = await takeLockOrAskServe(lock, config.dataDir, config.configPath, reset);
    if (delegated) {
      process.stdout.write(delegated.text);
      return delegated.code;
    }
    if (reset) process.stdout.write(`Dropped the saved index in ${config.dataDir}; rebuilding it.\n`);
    const catalog = await openCatalog(config, logger, { reset, onEmbedProgress: ttyEmbedProgress() });
    if (catalog.recovered) process.stdout.write(`${catalog.recovered}\n`);
    // From here on servers run: Ctrl-C or SIGTERM stops them (and their helpers) before we exit.
    const stop = watchStopSignals();
    const pool = createUpstreamPool({
      servers: config.servers,
      logger: logger.child("upstream"),
      ancestry: ancestry.forChildren,
      ...upstreamBounds(config),
      auth: upstreamAuth(config.dataDir),
      stopSignal: stop.signal,
      eras: catalog.eras,
    });
    const isTty = Boolean(process.stderr.isTTY);
    const progress = (report: ServerReport, done: number, total: number) => {
      if (!isTty) return;
      const state = report.error ? "failed" : `${report.toolCount} tools`;
      process.stderr.write(`\r\x1b[2K[${done}/${total}] ${report.name}: ${state}`);
    };
    if (isTty && enabled.length > 0) process.stderr.write(`Connecting to ${enabled.length} servers...`);
    try {
      const report = await refreshCatalog(config, catalog, pool, {
        logger,
        onServerDone: progress,
        includeLazy: true,
      });
      if (isTty && enabled.length > 0) process.stderr.write("\r\x1b[2K");
      if (stop.received) {
        const done = report.servers.filter((server) => !server.error && !server.awaitingApproval).length;
        process.stderr.write(
          `mcpproxy: index stopped by ${stop.received}; the servers it started are stopped. ` +
            `${done} of ${enabled.length} servers were indexed and saved; run index again for the rest.\n`,
        );
        return stop.exitCode();
      }
      // The vectors are embedded after the lexical index (tool-vectors.ts); index waits for them,
      // unless stopped, so that a serve started next has them. In `auto` search a serve embeds
      // them when a request first needs them; index embeds them now all the same.
      await Promise.race([embedded(catalog, config.search.mode === "auto"), stopped(stop.signal)]);
      if (isTty) process.stderr.write("\r\x1b[2K");
      if (stop.received) {
        process.stderr.write(
          `mcpproxy: index stopped by ${stop.received} while embedding; the tools are indexed and ` +
            "searchable, and the vectors not embedded yet are embedded by the next serve or index.\n",
        );
        return stop.exitCode();
      }
      const summary = summarizeIndexing(report, catalog);
      process.stdout.write(summary.text);
      return summary.code;
    } finally {
      await pool.close();
      await catalog.close();
      stop.dispose();
    }
  } finally {
    lock.release();
  }
}

/**
 * Every tool's vector, or an EMBEDDER_UNAVAILABLE error that says the lexical index is saved. In
 * `auto` search (`isOptional`) the vectors only help the requests BM25 answers weakly, so a failure
 * is said on stderr and index succeeds: the default set-up never fails for the encoder's sake.
 */
async function embedded(catalog: ToolCatalog, isOptional: boolean): Promise<void> {
  try {
    await catalog.whenEmbedded({ start: true });
  } catch (error) {
    if (isOptional) {
      process.stderr.write(
        `mcpproxy: embedding the tools failed (${describeError(error)}); the index is saved, and search ` +
          "answers the requests it would have helped with BM25 alone. Run index again to retry, or set " +
          "MCPPROXY_SEARCH_MODE=lexical.\n",
      );
      return;
    }
    throw new ProxyError(
      "EMBEDDER_UNAVAILABLE",
      `Embedding the tools failed (${describeError(error)}). The lexical index is saved and search works; ` +
        "run index again to retry, or set MCPPROXY_EMBEDDER=BM25.",
      { cause: error },
    );
  }
}

const stopped = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });

/**
 * Waits for the data dir's writer lock. Another `index` run holds it until it ends, so this one
 * waits (and says so); a `serve` holds it for its life, so it is asked to re-index its servers
 * (index-requests.ts) and its summary is what this run prints. Resolves to that summary, or to
 * undefined once this process holds the lock and indexes itself.
 */
async function takeLockOrAskServe(
  lock: WriterLock,
  dataDir: string,
  configPath: string,
  reset: boolean,
): Promise<IndexSummary | undefined> {
  let saidWaiting = false;
  while (!lock.tryAcquire()) {
    const holder = lock.holder();
    if (holder?.role === "serve") {
      const serve = `mcpproxy serve (pid ${holder.pid})`;
      if (reset) {
        throw new ProxyError(
          "INDEX_BUSY",
          `${serve} keeps the index in ${dataDir}: rebuilding it from nothing (--force, MCPPROXY_RESET_DATA) ` +
            "needs the data dir to itself. Stop that serve first, or run `mcpproxy index` without --force to have it re-index.",
        );
      }
      const answer = await askServeToIndex(dataDir, holder.pid, () =>
        process.stderr.write(
          `Waiting for ${serve}, which keeps the index in ${dataDir}, to finish starting...\n`,
        ),
      );
      if (answer === "gone") continue;
      if (answer === "unanswered") {
        throw new ProxyError(
          "INDEX_BUSY",
          `${serve} keeps the index in ${dataDir} and did not take the request to re-index in ` +
            `${TAKE_WAIT_MS / 1000} s. Restart that serve (it indexes every server when it starts), or give this run another --data-dir.`,
        );
      }
      const header =
        `${serve} keeps the index in ${dataDir}; it re-indexed the servers of its config` +
        (answer.configPath && answer.configPath !== configPath
          ? ` (${answer.configPath}, not ${configPath})`
          : "") +
        ":\n";
      return { text: header + answer.text, code: answer.code };
    }
    if (!saidWaiting) {
      saidWaiting = true;
      process.stderr.write(
        `Waiting for ${holder ? `the mcpproxy ${holder.role ?? "process"} (pid ${holder.pid})` : "another mcpproxy"} ` +
          `that is writing the index in ${dataDir} to finish...\n`,
      );
    }
    await Bun.sleep(WAIT_POLL_MS);
  }
  return undefined;
}

/** How often a waiting `index` tries the lock again. */
const WAIT_POLL_MS = 200;

/**
 * `index --store`: the replica holding the shared store's lease re-indexes (store/index-requests.ts)
 * and this prints its summary. `--force` is refused: dropping the shared catalog would drop every
 * replica's approvals, and each replica builds its search index from the catalog when it starts.
 */
async function indexThroughStore(config: ResolvedConfig, isForced: boolean): Promise<number> {
  const shown = storeLocationOf(config.store);
  const where = shown.kind === "local" ? "" : shown.shown;
  if (isForced || config.resetData) {
    throw new ProxyError(
      "USAGE",
      `--force (or MCPPROXY_RESET_DATA) is refused with a shared store: the catalog in ${where} holds every ` +
        "replica's approvals. Run `mcpproxy index --store` without it to have the lease holder re-index every " +
        "server; a replica rebuilds its search index from the shared catalog when it restarts.",
    );
  }
  return withCommandStore(config, async (store) => {
    if (!store) return 1; // a store is set: withCommandStore opened it or threw
    const answer = await askLeaseHolderToIndex(store);
    if (answer.kind === "no-holder") {
      throw new ProxyError(
        "INDEX_BUSY",
        `No replica of the shared store ${where} holds its lease, so none can index: start one with ` +
          "`mcpproxy serve --store URL` (it indexes every server of the store's registry when it starts), then run index again.",
      );
    }
    if (answer.kind === "unanswered") {
      throw new ProxyError(
        "INDEX_BUSY",
        `Replica ${answer.replica} holds the lease of ${where} but did not take the request to re-index in ` +
          `${STORE_TAKE_WAIT_MS / 1000} s. Look at its log (is it still starting?), or restart it.`,
      );
    }
    if (answer.kind === "holder-gone") {
      throw new ProxyError(
        "INDEX_BUSY",
        `Replica ${answer.replica} was re-indexing for ${where} but stopped holding the lease before it finished ` +
          "(it stopped, or lost PostgreSQL). What it indexed is kept; run index again to have the new lease holder finish.",
      );
    }
    process.stdout.write(
      `Replica ${answer.replica} holds the lease of the shared store ${where}; it re-indexed the servers of the store's registry:\n` +
        answer.summary.text,
    );
    return answer.summary.code;
  });
}
