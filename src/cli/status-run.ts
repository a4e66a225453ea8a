import { serviceStatus, statusText } from "../service/service-status.ts";
import type { CommandValues } from "./command.ts";
import { loadCommandConfig } from "./command-config.ts";

/** `mcpproxy status` (its flags and help: status-command.ts). */
export async function runStatusCommand(values: CommandValues, _positionals: string[]): Promise<number> {
  const config = loadCommandConfig(values);
  const status = await serviceStatus(config.dataDir);
  process.stdout.write(values.json ? `${JSON.stringify(status, null, 2)}\n` : statusText(status));
  return status.running ? 0 : 3;
}
