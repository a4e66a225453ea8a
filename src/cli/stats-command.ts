import { openCatalog } from "../app/open-catalog.ts";
import { ProxyError } from "../errors.ts";
import { redactSecrets } from "../security/redact-secrets.ts";
import { openCallStats, statsReport, type ToolStats } from "../stats/call-stats.ts";
import { COMMON_OPTIONS, type Command, commandLogger, loadCommandConfig } from "./command.ts";

/**
 * `mcpproxy stats`: the call statistics `serve` records (stats.db in the data dir), the same report
 * as the tools_stat tool; `--reset` clears a server's figures, one tool's, or all.
 */
export const statsCommand: Command = {
  name: "stats",
  summary:
    "Show how the tools behind the proxy have done: calls, success rate, mean and p95 latency, the last error, " +
    "for the most used and the failing tools. --reset [SERVER[/TOOL]] clears figures.",
  usage:
    "mcpproxy stats [--server S] [--top N] [--json] [--reset [SERVER[/TOOL]]] [--config FILE] [--data-dir DIR]",
  allowPositionals: true,
  options: {
    server: { type: "string", help: "--server S         only this server's tools" },
    top: { type: "string", help: "--top N            how many tools per list (default 10)" },
    json: { type: "boolean", help: "--json             print the report as JSON (as tools_stat returns it)" },
    reset: {
      type: "boolean",
      help: "--reset            clear the figures of SERVER, SERVER/TOOL, or every tool",
    },
    ...COMMON_OPTIONS,
  },
  async run(values, positionals) {
    const config = loadCommandConfig(values);
    const top = values.top === undefined ? undefined : Number(values.top);
    if (top !== undefined && (!Number.isInteger(top) || top < 1)) {
      throw new ProxyError("USAGE", "--top takes a whole number of at least 1.");
    }
    if (values.reset) {
      const [target] = positionals;
      const slash = target?.indexOf("/") ?? -1;
      const filter = target
        ? slash > 0
          ? { server: target.slice(0, slash), tool: target.slice(slash + 1) }
          : { server: target }
        : {};
      const stats = openCallStats(config.dataDir, { persist: true });
      try {
        const count = stats.reset(filter);
        process.stdout.write(`Cleared the figures of ${count} tool(s)${target ? ` (${target})` : ""}.\n`);
      } finally {
        stats.close();
      }
      return 0;
    }
    const stats = openCallStats(config.dataDir, { persist: false });
    const catalog = await openCatalog(config, commandLogger(config), { readOnly: true });
    try {
      const report = statsReport(stats.all(), {
        server: typeof values.server === "string" ? values.server : undefined,
        top,
        indexedTools: catalog.size(),
        servers: config.servers.length,
      });
      if (values.json) {
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        return 0;
      }
      const { totals } = report;
      const lines = [
        `${totals.calls} calls to ${totals.toolsCalled} tools (${totals.indexedTools} indexed on ${totals.servers} servers): ` +
          `${totals.successes} succeeded, ${totals.failures} failed.`,
      ];
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
      process.stdout.write(`${lines.join("\n")}\n`);
      return 0;
    } finally {
      stats.close();
      await catalog.close();
    }
  },
};

function row(t: ToolStats & { successRate: number }): string {
  return `  ${t.server}/${t.tool}: ${t.calls} calls, ${Math.round(t.successRate * 100)}% ok, mean ${t.meanMs} ms, p95 ${t.p95Ms} ms`;
}
