import { COMMON_OPTIONS, type Command } from "./command.ts";

export const importCommand: Command = {
  name: "import",
  summary:
    "Bring in the MCP servers your clients already use: reads Claude Desktop, Claude Code, Cursor, VS Code " +
    "and Windsurf configs (user and project files), shows what it found and what it will do, and adds them to " +
    "mcpproxy's config without duplicates (the same command with another env is another server, added under a suffixed name; a project's servers run in the project: it becomes their cwd), keeping a backup and every ${VAR} as written. --snippet prints " +
    "what to put in a client's config instead of its own server list; --use-service points Cursor, Claude Code and " +
    "VS Code at the background service (`mcpproxy start`).",
  usage:
    "mcpproxy import [--from claude-desktop|claude-code|cursor|vscode|windsurf|FILE] [--dry-run] [--snippet [--profile NAME]] [--use-service] [--config FILE]",
  options: {
    from: {
      type: "string",
      help: "--from SOURCE      one client (claude-desktop, claude-code, cursor, vscode, windsurf) or a config FILE; default: every client found",
    },
    "dry-run": { type: "boolean", help: "--dry-run          show what would be added, change nothing" },
    snippet: {
      type: "boolean",
      help: "--snippet          print the entry that replaces a client's server list with mcpproxy, and change nothing",
    },
    "use-service": {
      type: "boolean",
      help:
        "--use-service      point the clients that take a URL (Cursor, Claude Code, VS Code; or --from one) at the " +
        "background service: their mcpproxy entry becomes its URL with the token header, and the servers " +
        "mcpproxy already has leave their lists (a backup of each file is kept; with --dry-run, only shown)",
    },
    profile: {
      type: "string",
      help:
        "--profile NAME     with --snippet: the entry for one profile of mcpproxy.profiles (`serve --profile NAME` " +
        "over stdio, or its /mcp/p/NAME URL over HTTP)",
    },
    config: COMMON_OPTIONS.config,
    help: COMMON_OPTIONS.help,
  },
  async load() {
    return (await import("./import-run.ts")).runImportCommand;
  },
};
