import { stopService } from "../service/stop-service.ts";
import type { CommandValues } from "./command.ts";
import { loadCommandConfig } from "./command-config.ts";

/** `mcpproxy stop` (its flags and help: stop-command.ts). */
export async function runStopCommand(values: CommandValues, _positionals: string[]): Promise<number> {
  const config = loadCommandConfig(values);
  const stopped = await stopService(config.dataDir);
  if (!stopped.record) process.stdout.write(`mcpproxy is not running (data dir ${config.dataDir})\n`);
  else
    process.stdout.write(
      `mcpproxy stopped (pid ${stopped.record.pid})${stopped.isKilled ? ": it did not end in 30 s and was killed" : ""}\n`,
    );
  return 0;
}
