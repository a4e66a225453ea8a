import { mkdirSync } from "node:fs";
import { openCatalog, ttyEmbedProgress } from "../app/open-catalog.ts";
import { refreshCatalog, type ServerReport, summarizeRefresh } from "../app/refresh-catalog.ts";
import { watchStopSignals } from "../app/stop-signals.ts";
import { upstreamAuth } from "../auth/upstream-auth.ts";
import { ProxyError } from "../errors.ts";
import { acquireWriterLock } from "../index/writer-lock.ts";
import { loadPlugins } from "../plugins/load-plugins.ts";
import { resolveAncestry } from "../upstream/proxy-ancestry.ts";
import { createUpstreamPool } from "../upstream/upstream-pool.ts";
import { COMMON_OPTIONS, type Command, commandLogger, loadCommandConfig } from "./command.ts";

export const indexCommand: Command = {
  name: "index",
  summary:
    "Connect to every enabled server, index their tools incrementally and save the index. Prints what was\n" +
    "added, updated, removed and unchanged. Exits 1 when a server could not be indexed (the others are saved).",
  usage: "mcpproxy index [--config FILE] [--data-dir DIR] [--force]",
  options: {
    force: { type: "boolean", help: "--force            drop the saved index and rebuild it from scratch" },
    ...COMMON_OPTIONS,
  },
  async run(values) {
    const config = loadCommandConfig(values);
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
    const lock = acquireWriterLock(config.dataDir);
    if (!lock.isHeld) {
      throw new ProxyError(
        "INDEX_BUSY",
        `Another mcpproxy${lock.holder ? ` (pid ${lock.holder})` : ""} is writing the index in ${config.dataDir}. ` +
          "Run index when it has finished, or give this one another --data-dir.",
      );
    }
    const reset = Boolean(values.force) || config.resetData;
    if (reset) process.stdout.write(`Dropped the saved index in ${config.dataDir}; rebuilding it.\n`);
    const catalog = await openCatalog(config, logger, { reset, onEmbedProgress: ttyEmbedProgress() });
    if (catalog.recovered) process.stdout.write(`${catalog.recovered}\n`);
    // From here on servers run: Ctrl-C or SIGTERM stops them (and their helpers) before we exit.
    const stop = watchStopSignals();
    const pool = createUpstreamPool({
      servers: config.servers,
      logger: logger.child("upstream"),
      ancestry: ancestry.forChildren,
      maxResultBytes: config.maxResultBytes,
      maxTools: config.maxTools,
      maxToolListBytes: config.maxToolListBytes,
      auth: upstreamAuth(config.dataDir),
      stopSignal: stop.signal,
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
      const lines = [summarizeRefresh(report)];
      for (const server of report.servers) {
        lines.push(
          server.awaitingApproval
            ? `  HELD    ${server.name}: written by an agent; not started until you approve it (mcpproxy approve ${server.name})`
            : server.error
              ? `  FAILED  ${server.name}: ${server.error.split("\n").join("\n          ")}`
              : `  ok      ${server.name}: ${server.toolCount} tools${skippedNote(server.skipped)}`,
        );
      }
      const poisoned = catalog.findings();
      if (poisoned.length > 0) {
        lines.push(
          `${poisoned.length} tool${poisoned.length === 1 ? "" : "s"} may be poisoned (instructions aimed at the model, hidden text):`,
        );
        for (const tool of poisoned) lines.push(`  ${tool.server}/${tool.tool}: ${tool.findings.join("; ")}`);
      }
      const quarantined = catalog.quarantined();
      if (quarantined.length > 0) {
        lines.push(
          `${quarantined.length} tool${quarantined.length === 1 ? " is" : "s are"} quarantined (left out of search, refused when called) until approved:`,
        );
        for (const tool of quarantined) {
          lines.push(
            `  ${tool.server}/${tool.tool}: ${tool.reason === "new" ? "new" : "changed since approved"}`,
          );
          for (const finding of tool.findings) lines.push(`      may be poisoned: ${finding}`);
        }
        lines.push("Review and approve them with `mcpproxy approve` (it shows what changed).");
      }
      process.stdout.write(`${lines.join("\n")}\n`);
      return report.servers.some((server) => server.error) ? 1 : 0;
    } finally {
      await pool.close();
      await catalog.close();
      lock.release();
      stop.dispose();
    }
  },
};

function skippedNote(skipped: readonly string[] | undefined): string {
  return skipped && skipped.length > 0
    ? ` (left out ${skipped.length} malformed: ${skipped.join(", ")})`
    : "";
}
