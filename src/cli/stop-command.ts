import { COMMON_OPTIONS, type Command } from "./command.ts";

export const stopCommand: Command = {
  name: "stop",
  summary: "Stop the background service (`mcpproxy start`) and every server it started.",
  usage: "mcpproxy stop [--config FILE] [--data-dir DIR]",
  options: { ...COMMON_OPTIONS },
  async load() {
    return (await import("./stop-run.ts")).runStopCommand;
  },
};
