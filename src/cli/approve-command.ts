import { COMMON_OPTIONS, type Command, STORE_OPTION } from "./command.ts";

export const approveCommand: Command = {
  name: "approve",
  summary:
    "Review and approve what waits for you: servers an agent added, changed or enabled (nothing of them runs " +
    "until approved), servers held whole as new, and quarantined tools, prompts and resource templates (new " +
    "on a known server or changed since approved: hidden and refused). With no argument, lists them with " +
    "what they would run and what changed; with SERVER or SERVER/NAME (or --all), shows them and approves " +
    'them, except what the poisoning scan flags ("may be poisoned"): each of those is approved only when ' +
    "named (SERVER/NAME) or with --yes-flagged. A running proxy picks the approval up within a second; with " +
    "--store, every replica does.",
  usage:
    "mcpproxy approve [SERVER[/NAME] ...] [--all] [--yes-flagged] [--json] [--store URL] [--config FILE] [--data-dir DIR]",
  allowPositionals: true,
  options: {
    all: { type: "boolean", help: "--all              approve everything that waits" },
    "yes-flagged": {
      type: "boolean",
      help:
        "--yes-flagged      with SERVER or --all: also approve what the scan flags as may be poisoned (read it " +
        "first; without this flag each needs naming as SERVER/NAME)",
    },
    json: {
      type: "boolean",
      help: "--json             print what waits (and what was approved) as JSON",
    },
    ...STORE_OPTION,
    ...COMMON_OPTIONS,
  },
  async load() {
    return (await import("./approve-run.ts")).runApproveCommand;
  },
};
