import { COMMON_OPTIONS, type Command } from "./command.ts";

export const trayCommand: Command = {
  name: "tray",
  summary:
    "Show the background service's tray icon: its state at a glance, what waits for approval, each server with " +
    "enable/disable, Open console, Pause/Resume and Quit (the service starts it with mcpproxy.tray or `start --tray`).",
  usage: "mcpproxy tray [--config FILE] [--data-dir DIR]",
  options: { ...COMMON_OPTIONS },
  async load() {
    return (await import("./tray-run.ts")).runTrayCommand;
  },
};
