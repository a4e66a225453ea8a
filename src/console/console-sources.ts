import { open, stat } from "node:fs/promises";
import { type Waiting, whatWaits } from "../approvals/approval-choice.ts";
import type { ResolvedConfig } from "../config/load-config.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import type { RetrieveToolsResult } from "../index/retrieve-tools.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { Logger } from "../log.ts";
import type { ServerEditor } from "../server/tools/upstream-servers-tool.ts";
import type { ToolStats } from "../stats/call-record.ts";
import { readConfigServers } from "../store/config-writer.ts";
import type { ServerRegistry } from "../store/server-registry.ts";
import type { ServerStatus } from "../upstream/pool-types.ts";

/**
 * What the console reads and changes of a running proxy: the same objects `serve` uses (the pool's
 * states, the catalog, the server editor, the statistics, each profile's `retrieve_tools`), so what
 * it shows is what the agents get, and what it changes goes through the same code as the CLI.
 */
export interface ConsoleSources {
  servers(): readonly ServerStatus[];
  /** What doctor would say to do about a server's error. */
  hintFor(status: ServerStatus): string | undefined;
  /** The config as it applies now (the servers as the editor last applied them). */
  config(): ResolvedConfig;
  catalog: ToolCatalog;
  /** Everything that waits for a person (approval-choice.ts). */
  waiting(): Promise<Waiting>;
  /** Unset on a read-only proxy. */
  editor?: ServerEditor | undefined;
  registry?: ServerRegistry | undefined;
  stats?: (() => readonly ToolStats[]) | undefined;
  /** `retrieve_tools` of the whole proxy ("") and of each profile, by name. */
  searches: ReadonlyMap<string, (query: string) => Promise<RetrieveToolsResult>>;
  /** Paused by a person: calls are refused, servers keep running (the pool's). */
  isPaused(): boolean;
  setPaused(paused: boolean): void;
  /** Starts an OAuth server's login; resolves with the authorization URL to send the browser to. */
  login?: ((server: string) => Promise<string>) | undefined;
  /** Ends this proxy as a signal would (its servers stop with it). */
  stop(): void;
  /** The last lines of the proxy's log; unset when it logs to a terminal. */
  logTail?: ((lines: number) => Promise<string[]>) | undefined;
  logger: Logger;
}

export interface ConsoleSourcesOptions extends Omit<ConsoleSources, "config" | "waiting" | "logTail"> {
  config: ResolvedConfig;
  /** The servers as they apply now. */
  configured: () => readonly ServerConfig[];
  /** The file the proxy logs to, if any. */
  logPath?: string | undefined;
}

export function consoleSources(options: ConsoleSourcesOptions): ConsoleSources {
  const { config: start, configured, logPath, ...rest } = options;
  const config = () => ({ ...start, servers: [...configured()] });
  return {
    ...rest,
    config,
    async waiting() {
      const entries = options.registry
        ? await options.registry.list()
        : readConfigServers(start.configPath).servers;
      return whatWaits(config(), options.catalog, entries);
    },
    logTail: logPath ? (lines) => tailOf(logPath, lines) : undefined,
  };
}

/** The last `lines` lines of a file, read from its last 64 KiB (a log can be large). */
async function tailOf(path: string, lines: number): Promise<string[]> {
  const size = await stat(path).then(
    (s) => s.size,
    () => -1,
  );
  if (size <= 0) return [];
  const length = Math.min(size, 64 * 1024);
  const file = await open(path, "r");
  try {
    const buffer = Buffer.alloc(length);
    await file.read(buffer, 0, length, size - length);
    const text = buffer.toString("utf8").split("\n");
    if (length < size) text.shift(); // a line cut at the start
    return text.filter((line) => line !== "").slice(-lines);
  } finally {
    await file.close();
  }
}
