import { COMMON_OPTIONS, type Command } from "./command.ts";

export const statusCommand: Command = {
  name: "status",
  summary:
    "Say whether the background service runs, its URL and pid, since when, and its servers (exit code 0 when " +
    "it runs, 3 when it does not).",
  usage: "mcpproxy status [--json] [--config FILE] [--data-dir DIR]",
  options: {
    json: {
      type: "boolean",
      help: "--json             one JSON object: { running, url, pid, since, servers, … }",
    },
    ...COMMON_OPTIONS,
  },
  async load() {
    return (await import("./status-run.ts")).runStatusCommand;
  },
};
