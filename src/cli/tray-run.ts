import { originOf, runningService, serviceToken } from "../service/find-service.ts";
import { runTray } from "../tray/run-tray.ts";
import type { CommandValues } from "./command.ts";
import { commandLogger, loadCommandConfig } from "./command-config.ts";

/** `mcpproxy tray` (its flags and help: tray-command.ts). */
export async function runTrayCommand(values: CommandValues, _positionals: string[]): Promise<number> {
  const config = loadCommandConfig(values);
  return runTray({
    dataDir: config.dataDir,
    logger: commandLogger(config),
    service: async () => {
      const record = runningService(config.dataDir);
      if (!record) return undefined;
      return { origin: originOf(record), token: await serviceToken(config.dataDir) };
    },
  });
}
