import { COMMON_OPTIONS, type Command } from "./command.ts";

/**
 * `mcpproxy stats`: the call statistics `serve` records (stats.db in the data dir), the same report
 * as the tools_stat tool; `--reset` clears a server's figures, one tool's, or all.
 */
export const statsCommand: Command = {
  name: "stats",
  summary:
    "Show how the tools behind the proxy have done: calls, success rate, mean and p95 latency, the last error, " +
    "for the most used and the failing tools, and in llm search mode the chat model's requests, latency and " +
    "tokens. --reset [SERVER[/TOOL]] clears figures (with no SERVER, the chat model's too).",
  usage:
    "mcpproxy stats [--server S] [--top N] [--json] [--reset [SERVER[/TOOL]]] [--store URL] [--config FILE] [--data-dir DIR]",
  allowPositionals: true,
  options: {
    server: { type: "string", help: "--server S         only this server's tools" },
    top: { type: "string", help: "--top N            how many tools per list (default 10)" },
    json: { type: "boolean", help: "--json             print the report as JSON (as tools_stat returns it)" },
    reset: {
      type: "boolean",
      help: "--reset            clear the figures of SERVER, SERVER/TOOL, or every tool",
    },
    store: {
      type: "string",
      help:
        "--store URL        the figures of every replica sharing this PostgreSQL store, and its registry's servers and " +
        "catalog's tools (needs MCPPROXY_STORE_KEY; --reset then clears them for all replicas); or MCPPROXY_STORE",
    },
    ...COMMON_OPTIONS,
  },
  async load() {
    return (await import("./stats-run.ts")).runStatsCommand;
  },
};
