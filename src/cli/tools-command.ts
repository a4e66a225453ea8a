import { openCatalog } from "../app/open-catalog.ts";
import { ProxyError } from "../errors.ts";
import { publicDefinition } from "../index/retrieve-tools.ts";
import { COMMON_OPTIONS, type Command, commandLogger, loadCommandConfig } from "./command.ts";

export const toolsCommand: Command = {
  name: "tools",
  summary:
    "List every indexed tool, or one server's: its name, server and the first line of its description. " +
    "Reads the saved index only; run `mcpproxy index` first.",
  usage: "mcpproxy tools [SERVER] [--json] [--config FILE] [--data-dir DIR]",
  allowPositionals: true,
  options: {
    json: {
      type: "boolean",
      help: "--json             print {tools: [...]} with each tool's full definition, as retrieve_tools shows it",
    },
    ...COMMON_OPTIONS,
  },
  async run(values, positionals) {
    if (positionals.length > 1) throw new ProxyError("USAGE", "tools takes at most one SERVER name.");
    const [server] = positionals;
    const config = loadCommandConfig(values);
    const catalog = await openCatalog(config, commandLogger(config), { readOnly: true });
    try {
      const names = catalog.names(server).sort();
      if (server !== undefined && names.length === 0) {
        const known = [...new Set(catalog.names().map((name) => catalog.get(name)?.server))].sort();
        throw new ProxyError(
          "USAGE",
          `No indexed server is named ${server}.${known.length > 0 ? ` Indexed servers: ${known.join(", ")}.` : " The index is empty: run `mcpproxy index`."}`,
        );
      }
      const tools = names.flatMap((name) => {
        const tool = catalog.get(name);
        const definition = tool ? catalog.definitionOf(tool) : undefined;
        return tool && definition ? [publicDefinition(tool, definition)] : [];
      });
      if (values.json) {
        process.stdout.write(`${JSON.stringify({ tools }, null, 2)}\n`);
        return 0;
      }
      if (tools.length === 0) {
        process.stdout.write("No tools are indexed yet: run `mcpproxy index`.\n");
        return 0;
      }
      const width = Math.min(48, Math.max(...tools.map((tool) => tool.name.length)));
      const lines: string[] = [];
      let current: string | undefined;
      for (const tool of tools.sort(
        (a, b) => a.server.localeCompare(b.server) || a.name.localeCompare(b.name),
      )) {
        if (tool.server !== current) {
          current = tool.server;
          const count = tools.filter((other) => other.server === current).length;
          lines.push(`${lines.length > 0 ? "\n" : ""}${current} (${count} tool${count === 1 ? "" : "s"})`);
        }
        const first = (tool.description.split("\n").find((line) => line.trim() !== "") ?? "").trim();
        lines.push(`  ${tool.name.padEnd(width)}  ${first}`);
      }
      process.stdout.write(`${lines.join("\n")}\n${tools.length} tools\n`);
      return 0;
    } finally {
      await catalog.close();
    }
  },
};
