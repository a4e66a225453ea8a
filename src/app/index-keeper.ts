import { describeError } from "../errors.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { Logger } from "../log.ts";
import type { WriterLock } from "../store/sqlite/writer-lock.ts";
import type { CatalogHandle } from "./catalog-handle.ts";
import type { CatalogSync } from "./catalog-sync.ts";
import { startIndexRequests } from "./index-requests.ts";
import type { IndexSummary } from "./index-summary.ts";

/**
 * Who keeps a data dir's index among the serves on it. The one holding the writer lock writes the
 * index and re-indexes when `mcpproxy index` asks. Another serve on the same data dir (a second
 * MCP client started its own) answers its own client from its own servers and writes nothing
 * there; it tries the lock every second, and once the first one has exited it opens the catalog
 * for writing, indexes its servers into it and keeps the index from then on.
 */
export interface IndexKeeperOptions {
  lock: WriterLock;
  dataDir: string;
  catalog: CatalogHandle;
  sync: CatalogSync;
  logger: Logger;
  /** Opens the data dir's catalog for writing (once this serve holds the lock). */
  openWritable: () => Promise<ToolCatalog>;
  /**
   * What it logs when it takes over. By default the data dir's story (another serve on this data dir
   * exited); a team's replica says it now holds the store's lease (join-team.ts).
   */
  takeOverMessage?: string | undefined;
  /** Called once this serve has taken the data dir over: what else it keeps there starts saving. */
  onTakenOver?: () => void;
  /** A team deployment's `index --store` requests, answered by the lease holder (join-team.ts). */
  answerTeam?: ((reindex: () => Promise<IndexSummary>) => () => void) | undefined;
}

/** How often a serve without the lock tries it. */
const TAKE_OVER_EVERY_MS = 1_000;

/** Starts keeping (or waiting to keep) the index; returns a function that stops. */
export function startIndexKeeper(options: IndexKeeperOptions): () => void {
  const { lock, dataDir, logger } = options;
  let stopRequests: (() => void) | undefined;
  const answerRequests = () => {
    const reindex = () => options.sync.reindex();
    const stopLocal = startIndexRequests(dataDir, reindex, logger);
    const stopTeam = options.answerTeam?.(reindex);
    stopRequests = () => {
      stopLocal();
      stopTeam?.();
    };
  };
  if (lock.isHeld) {
    answerRequests();
    return () => stopRequests?.();
  }

  let isStopped = false;
  const takeOver = async () => {
    logger.info(
      options.takeOverMessage ??
        `the mcpproxy that kept the index in ${dataDir} has exited; this one keeps it now`,
    );
    try {
      options.catalog.replace(await options.openWritable());
    } catch (error) {
      logger.error(`could not open the index in ${dataDir} for writing: ${describeError(error)}`);
      lock.release();
      return;
    }
    if (isStopped) return;
    options.onTakenOver?.();
    answerRequests();
    await options.sync.indexAll();
  };
  const timer = setInterval(() => {
    if (!lock.tryAcquire()) return;
    clearInterval(timer);
    void takeOver();
  }, TAKE_OVER_EVERY_MS);
  timer.unref?.();
  return () => {
    isStopped = true;
    clearInterval(timer);
    stopRequests?.();
  };
}
