import { COMMON_OPTIONS, type Command } from "./command.ts";

export const startCommand: Command = {
  name: "start",
  summary:
    "Run the proxy in the background for this user: one service on 127.0.0.1 (a port kept in the data dir, the " +
    "bearer token required) that every MCP client shares; `mcpproxy serve` over stdio attaches to it.",
  usage: "mcpproxy start [--tray] [--config FILE] [--data-dir DIR]",
  options: {
    tray: {
      type: "boolean",
      help: "--tray             show its tray icon too (on a desktop; as mcpproxy.tray: true does)",
    },
    ...COMMON_OPTIONS,
  },
  async load() {
    return (await import("./start-run.ts")).runStartCommand;
  },
};
