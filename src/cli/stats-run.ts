import { openCatalog } from "../app/open-catalog.ts";
import type { ResolvedConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import { redactSecrets } from "../security/redact-secrets.ts";
import type { CallStats, ToolStats } from "../stats/call-record.ts";
import { openCallStats } from "../stats/call-stats.ts";
import { openSharedCallStats } from "../stats/shared-call-stats.ts";
import { statsReport } from "../stats/stats-report.ts";
import { statsTablesOf } from "../store/postgres/stats-tables.ts";
import type { SharedStore } from "../store/shared-store.ts";
import type { CommandValues } from "./command.ts";
import { commandLogger, loadCommandConfig } from "./command-config.ts";
import { storeOverrides, withCommandStore, withStoreView } from "./command-store.ts";

/** `mcpproxy stats`: what it does once its flags are parsed (its flags and help: stats-command.ts). */
export async function runStatsCommand(values: CommandValues, positionals: string[]): Promise<number> {
  const overrides = storeOverrides(values);
  const fileConfig = loadCommandConfig(values, overrides);
  const top = values.top === undefined ? undefined : Number(values.top);
  if (top !== undefined && (!Number.isInteger(top) || top < 1)) {
    throw new ProxyError("USAGE", "--top takes a whole number of at least 1.");
  }
  return withCommandStore(fileConfig, async (store) => {
    const stats = await openStatsOf(fileConfig, store, Boolean(values.reset));
    // With a store, servers and tools are counted as replicas see them: its registry and catalog.
    const serversIn = store ? "the shared store's registry" : fileConfig.configPath;
    try {
      return await withStoreView(
        store,
        fileConfig,
        (text) => loadCommandConfig(values, overrides, text),
        (config) =>
          values.reset
            ? reset(config, stats, positionals, serversIn)
            : show(config, stats, values, top, serversIn),
      );
    } finally {
      await stats.close();
    }
  });
}

type Stats = Awaited<ReturnType<typeof openStatsOf>>;

async function reset(
  config: ResolvedConfig,
  stats: Stats,
  positionals: string[],
  serversIn: string,
): Promise<number> {
  const [target] = positionals;
  const slash = target?.indexOf("/") ?? -1;
  const filter = target
    ? slash > 0
      ? { server: target.slice(0, slash), tool: target.slice(slash + 1) }
      : { server: target }
    : {};
  if (filter.server) await mustBeKnown(config, serversIn, stats.all(), filter.server, filter.tool);
  const count = await stats.resetAll(filter);
  process.stdout.write(
    `Cleared the figures of ${count} tool(s)${target ? ` (${target})` : ""}${stats.where}.\n`,
  );
  return 0;
}

async function show(
  config: ResolvedConfig,
  stats: Stats,
  values: Record<string, string | boolean | undefined>,
  top: number | undefined,
  serversIn: string,
): Promise<number> {
  const catalog = await openCatalog(config, commandLogger(config), { readOnly: true });
  try {
    if (typeof values.server === "string")
      await mustBeKnown(config, serversIn, stats.all(), values.server, undefined, catalog);
    const report = statsReport(stats.all(), {
      server: typeof values.server === "string" ? values.server : undefined,
      top,
      indexedTools: catalog.size(),
      servers: config.servers.length,
      reranks: stats.reranks(),
    });
    if (values.json) {
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      return 0;
    }
    const { totals } = report;
    const lines = [
      `${totals.calls} calls to ${totals.toolsCalled} tools (${totals.indexedTools} indexed on ${totals.servers} servers): ` +
        `${totals.successes} succeeded, ${totals.failures} failed.` +
        (totals.limited > 0 ? ` ${totals.limited} more were refused by a server's call limits.` : ""),
    ];
    if (report.limited.length > 0) {
      lines.push(
        "",
        "Refused by call limits (rateLimit, maxConcurrent, queueSize):",
        ...report.limited.map((t) => `  ${t.server}/${t.tool}: ${t.limited} refused, ${t.calls} made`),
      );
    }
    if (report.top.length > 0) lines.push("", "Most used:", ...report.top.map(row));
    if (report.failing.length > 0) {
      lines.push(
        "",
        "Failing:",
        ...report.failing.map(
          (t) =>
            `${row(t)}${t.lastError ? `\n      last error: ${redactSecrets(t.lastError.split("\n")[0] ?? "")}` : ""}`,
        ),
      );
    }
    if (totals.calls === 0) lines.push("Nothing recorded yet: calls through `mcpproxy serve` are counted.");
    for (const llm of report.llmRerank ?? []) {
      lines.push(
        "",
        `LLM re-rank (${llm.model}): ${llm.requests} requests, mean ${llm.meanMs} ms, p95 ${llm.p95Ms} ms; ` +
          `${llm.promptTokens} prompt + ${llm.completionTokens} completion tokens ` +
          `(${llm.meanPromptTokens} + ${llm.meanCompletionTokens} a request); ${llm.cacheHits} searches from the cache, ` +
          `${llm.fallbacks} kept the search's order${llm.lastFallback ? ` (last: ${llm.lastFallback})` : ""}.`,
      );
    }
    process.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  } finally {
    await catalog.close();
  }
}

/**
 * A server (or one of its tools) named on the command line must be configured, indexed or have
 * figures: a typo otherwise read as "nothing recorded" or "cleared 0", and exited 0.
 */
async function mustBeKnown(
  config: ResolvedConfig,
  /** Where the servers come from, as the message names it: the config file, or the store's registry. */
  serversIn: string,
  recorded: readonly ToolStats[],
  server: string,
  tool?: string,
  open?: ToolCatalog,
): Promise<void> {
  const catalog = open ?? (await openCatalog(config, commandLogger(config), { readOnly: true }));
  try {
    const servers = new Set([
      ...config.servers.map((s) => s.name),
      ...recorded.map((t) => t.server),
      ...catalog.names().map((name) => catalog.get(name)?.server ?? ""),
    ]);
    servers.delete("");
    if (!servers.has(server)) {
      const known = [...servers].sort();
      throw new ProxyError(
        "USAGE",
        `No server named ${server}: it is not in ${serversIn} and has no recorded figures. ` +
          (known.length > 0 ? `Known servers: ${known.join(", ")}.` : "No server is known yet."),
      );
    }
    if (tool === undefined) return;
    const isKnownTool =
      recorded.some((t) => t.server === server && t.tool === tool) ||
      catalog.names(server).some((name) => catalog.get(name)?.tool === tool);
    if (!isKnownTool) {
      throw new ProxyError(
        "USAGE",
        `Server ${server} has no tool named ${tool} with recorded figures or in the index. ` +
          `See its tools with \`mcpproxy stats --server ${server}\` or \`mcpproxy tools ${server}\`.`,
      );
    }
  } finally {
    if (!open) await catalog.close();
  }
}

function row(t: ToolStats & { successRate: number }): string {
  return `  ${t.server}/${t.tool}: ${t.calls} calls, ${Math.round(t.successRate * 100)}% ok, mean ${t.meanMs} ms, p95 ${t.p95Ms} ms`;
}

/**
 * The figures `serve` records: stats.db in the data dir, or with a shared store (--store,
 * MCPPROXY_STORE, mcpproxy.store) every replica's, added together; a reset there is for all.
 */
async function openStatsOf(
  config: ResolvedConfig,
  store: SharedStore | undefined,
  persist: boolean,
): Promise<
  Pick<CallStats, "all" | "reranks"> & {
    where: string;
    resetAll(filter: { server?: string; tool?: string }): Promise<number>;
    close(): Promise<void>;
  }
> {
  if (!store) {
    const stats = openCallStats(config.dataDir, { persist });
    return {
      all: () => stats.all(),
      reranks: () => stats.reranks(),
      where: "",
      resetAll: async (filter) => stats.reset(filter),
      close: async () => stats.close(),
    };
  }
  const stats = await openSharedCallStats(statsTablesOf(store));
  return {
    all: () => stats.all(),
    reranks: () => stats.reranks(),
    where: ` for every replica of ${store.shown}`,
    resetAll: (filter) => stats.resetShared(filter),
    close: () => stats.close(),
  };
}
