import { COMMON_OPTIONS, type Command, STORE_OPTION } from "./command.ts";

export const toolsCommand: Command = {
  name: "tools",
  summary:
    "List every indexed tool, or one server's: its name, server and the first line of its description. " +
    "Reads the saved index only; run `mcpproxy index` first. With --store, the shared store's catalog " +
    "(what every replica serves) instead of the data dir's; nothing is written to the store.",
  usage: "mcpproxy tools [SERVER] [--json] [--store URL] [--config FILE] [--data-dir DIR]",
  allowPositionals: true,
  options: {
    json: {
      type: "boolean",
      help: "--json             print {tools: [...]} with each tool's full definition, as retrieve_tools shows it",
    },
    ...STORE_OPTION,
    ...COMMON_OPTIONS,
  },
  async load() {
    return (await import("./tools-run.ts")).runToolsCommand;
  },
};
