import { startServiceTray } from "../service/service-tray.ts";
import { startService } from "../service/start-service.ts";
import type { CommandValues } from "./command.ts";
import { commandLogger, loadCommandConfig } from "./command-config.ts";

/** `mcpproxy start` (its flags and help: start-command.ts). */
export async function runStartCommand(values: CommandValues, _positionals: string[]): Promise<number> {
  const config = loadCommandConfig(values);
  const tray = Boolean(values.tray);
  const started = await startService({ dataDir: config.dataDir, configPath: config.configPath, tray });
  // A service that ran already was started without it: its tray starts now, beside it.
  if (tray && !started.isNew)
    startServiceTray({ dataDir: config.dataDir, configPath: config.configPath }, commandLogger(config));
  const { record } = started;
  process.stdout.write(
    started.isNew
      ? `mcpproxy started: ${record.url} (pid ${record.pid}); log ${started.logPath}\n` +
          "  MCP clients that run `mcpproxy serve` now share it; `mcpproxy status` shows it, `mcpproxy stop` ends it.\n"
      : `mcpproxy is already running: ${record.url} (pid ${record.pid}, since ${record.since})\n`,
  );
  return 0;
}
