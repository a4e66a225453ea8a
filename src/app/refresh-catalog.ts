import type { ResolvedConfig } from "../config/load-config.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import { describeError } from "../errors.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { SyncCounts } from "../index/tool-sync.ts";
import type { Logger } from "../log.ts";
import type { ConnectOutcome } from "../upstream/pool-types.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
import type { UpstreamTool } from "../upstream-tool.ts";

/**
 * Connects every enabled server and brings the catalog in line with what they list now:
 * shared by `serve` (in the background) and `index` (in the foreground). A server that cannot
 * be reached keeps the tools it had, so search still knows them; a server that left the config
 * (or was disabled) loses its tools.
 */
export interface ServerReport {
  name: string;
  error?: string | undefined;
  counts?: SyncCounts | undefined;
  toolCount: number;
  /** Malformed tools the server listed, left out of the index. */
  skipped?: readonly string[] | undefined;
  /** Not started: it waits for a person to approve what an agent wrote (not a failure). */
  awaitingApproval?: boolean | undefined;
}

export interface RefreshReport {
  servers: ServerReport[];
  totals: SyncCounts;
  toolCount: number;
  elapsedMs: number;
  /** The proxy stopped during the pass: servers not reached by then are not failures, and not reported. */
  stopped: boolean;
}

export interface RefreshOptions {
  logger: Logger;
  /**
   * Start lazy servers too (`index`); `serve` leaves them until a call needs them, their tools kept,
   * but for those the index has no tool of yet (isUnindexed) unless `startUnindexed` is false.
   */
  includeLazy?: boolean;
  startUnindexed?: boolean | undefined;
  onServerDone?: (report: ServerReport, done: number, total: number) => void;
  /**
   * The servers as they are when the pass ends (serve's change at run time); unset, the config's.
   * What the pass drops is worked out from them: a server a config change added while the pass ran
   * (indexed when it connected) keeps its tools.
   */
  servers?: (() => readonly ServerConfig[]) | undefined;
}

export async function refreshCatalog(
  config: ResolvedConfig,
  catalog: ToolCatalog,
  pool: UpstreamPool,
  options: RefreshOptions,
): Promise<RefreshReport> {
  const started = performance.now();
  const enabled = config.servers.filter((server) => server.enabled);
  const startsLazy = (server: string) =>
    options.includeLazy === true || (options.startUnindexed !== false && isUnindexed(catalog, server));
  const connecting = enabled.filter((server) => !server.lazy || startsLazy(server.name));
  const reports: ServerReport[] = [];
  let stopped = false;
  const totals: SyncCounts = { added: 0, updated: 0, removed: 0, unchanged: 0 };
  const add = (counts: SyncCounts) => {
    for (const key of Object.keys(totals) as (keyof SyncCounts)[]) totals[key] += counts[key];
  };

  await pool.connectAll(async (outcome: ConnectOutcome) => {
    if (outcome.stopped) {
      stopped = true;
      return;
    }
    let report: ServerReport;
    if (outcome.tools) {
      try {
        reviewListed(catalog, outcome);
        const counts = await catalog.syncServer(outcome.server, outcome.tools as readonly UpstreamTool[]);
        add(counts);
        report = { name: outcome.server, counts, toolCount: outcome.tools.length, skipped: outcome.skipped };
      } catch (error) {
        report = { name: outcome.server, error: `indexing failed: ${describeError(error)}`, toolCount: 0 };
      }
    } else if (outcome.awaitingApproval) {
      report = { name: outcome.server, toolCount: 0, awaitingApproval: true };
      options.logger.warn(`${outcome.server}: ${outcome.error}`);
    } else {
      report = { name: outcome.server, error: outcome.error ?? "unknown error", toolCount: 0 };
      options.logger.warn(
        outcome.notStarted ? `${report.error}` : `${outcome.server}: could not connect: ${report.error}`,
      );
    }
    reports.push(report);
    options.onServerDone?.(report, reports.length, connecting.length);
  }, startsLazy);
  // Stopped half-way, the servers indexed so far are saved; what the others had is kept.
  if (!stopped) {
    const now = options.servers?.() ?? config.servers;
    add(await catalog.removeServersExcept(runnableServers(now)));
    catalog.forgetServersExcept(pinnedServers(now));
  }
  await catalog.persist();
  reports.sort((a, b) => a.name.localeCompare(b.name));
  return {
    servers: reports,
    totals,
    toolCount: catalog.size(),
    elapsedMs: performance.now() - started,
    stopped,
  };
}

/**
 * A server the index knows no tool of (new, or never reached): started even when lazy, once, to list
 * its tools, which nothing could find otherwise; it then stays up as one a call started.
 */
export function isUnindexed(catalog: ToolCatalog, server: string): boolean {
  // Disabled tools count: a lazy server whose tools a person all hid is known, not new.
  return !catalog.hasTools(server);
}

/** Pins the prompts and templates a server listed as it connected (the first sight of them). */
export function reviewListed(catalog: ToolCatalog, outcome: ConnectOutcome): void {
  const { listed } = outcome;
  if (listed?.prompts) catalog.capabilities?.review(outcome.server, "prompt", listed.prompts);
  if (listed?.templates) catalog.capabilities?.review(outcome.server, "template", listed.templates);
}

/**
 * The servers whose tools the catalog keeps: enabled ones, but for those awaiting approval (an
 * agent changed them: what their old process listed is not what would run now).
 */
export function runnableServers(servers: readonly ServerConfig[]): Set<string> {
  return new Set(servers.filter((s) => s.enabled && !s.awaitingApproval).map((s) => s.name));
}

/**
 * The servers whose approvals are kept: every configured one, but for those whose launch spec an
 * agent wrote and no person approved yet. Once a person approves that, it is a new server whose
 * tools are reviewed again (with the approvals, a new process serving the old definitions would
 * pass). A server the agent only enabled runs what it ran before, and keeps them.
 */
export function pinnedServers(servers: readonly ServerConfig[]): Set<string> {
  return new Set(servers.filter((s) => s.awaitingApproval !== "launch").map((s) => s.name));
}

export function summarizeRefresh(report: RefreshReport): string {
  const ok = report.servers.filter((server) => !server.error && !server.awaitingApproval).length;
  const { added, updated, removed, unchanged } = report.totals;
  return (
    `${ok} of ${report.servers.length} servers indexed in ${(report.elapsedMs / 1000).toFixed(1)}s; ` +
    `${report.toolCount} tools (${added} added, ${updated} updated, ${removed} removed, ${unchanged} unchanged)`
  );
}
