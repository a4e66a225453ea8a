import type { ResolvedConfig } from "../config/load-config.ts";
import type { Logger } from "../log.ts";
import { listChangedExecPlugin } from "../plugins/builtin/list-changed-exec.ts";
import { truncateOutputPlugin } from "../plugins/builtin/truncate-output.ts";
import { type LoadedPlugin, loadPlugins } from "../plugins/load-plugins.ts";
import { createPluginRunner, type PluginRunner } from "../plugins/plugin-runner.ts";

/**
 * The config's plugins and the built-ins their settings turn on, loaded and set up: shared by
 * `serve` (every hook) and `search` (its rankers). The caller disposes the runner.
 */
export async function startPlugins(config: ResolvedConfig, logger: Logger): Promise<PluginRunner> {
  const builtins: LoadedPlugin[] = [];
  if (config.truncateOutputLen > 0) {
    builtins.push({
      plugin: truncateOutputPlugin(config.truncateOutputLen),
      options: undefined,
      source: "built-in",
    });
  }
  if (config.listChangedExec.length > 0) {
    builtins.push({
      plugin: listChangedExecPlugin({ argv: config.listChangedExec, env: process.env }),
      options: undefined,
      source: "built-in",
    });
  }
  const user = await loadPlugins(config.plugins, { strict: config.strictPlugins, logger });
  const runner = createPluginRunner({
    plugins: [...user, ...builtins],
    logger,
    timeoutMs: config.pluginTimeoutMs,
    strict: config.strictPlugins,
    dataDir: config.dataDir,
  });
  await runner.setup();
  if (runner.names.length > 0) logger.info(`plugins: ${runner.names.join(", ")}`);
  return runner;
}
