import { COMMON_OPTIONS, type Command } from "./command.ts";

export const serviceCommand: Command = {
  name: "service",
  summary:
    "Start mcpproxy at login: `service install` writes and enables a systemd user unit (Linux), a launchd agent " +
    "(macOS) or a scheduled task (Windows) that runs the background service and restarts it when it fails; " +
    "`service uninstall` removes it; `service run` is the service in the foreground (what the units run).",
  usage:
    "mcpproxy service install|uninstall|run [--dry-run [--platform linux|macos|windows]] [--config FILE] [--data-dir DIR]",
  allowPositionals: true,
  options: {
    "dry-run": {
      type: "boolean",
      help: "--dry-run          print the unit and the commands that enable it; write and run nothing",
    },
    platform: {
      type: "string",
      help: "--platform P       with --dry-run: the unit of linux, macos or windows (default: this system's)",
    },
    "log-level": {
      type: "string",
      help: "--log-level L      service run: error, warn, info (default) or debug; or MCPPROXY_LOG_LEVEL",
    },
    ...COMMON_OPTIONS,
  },
  async load() {
    return (await import("./service-run.ts")).runServiceCommand;
  },
};
