import { openCatalog } from "../app/open-catalog.ts";
import type { ResolvedConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors.ts";
import { publicDefinition } from "../index/retrieve-tools.ts";
import type { CommandValues } from "./command.ts";
import { commandLogger, loadCommandConfig } from "./command-config.ts";
import { storeOverrides, withCatalogToRead } from "./command-store.ts";

/** `mcpproxy tools`: what it does once its flags are parsed (its flags and help: tools-command.ts). */
export async function runToolsCommand(values: CommandValues, positionals: string[]): Promise<number> {
  if (positionals.length > 1) throw new ProxyError("USAGE", "tools takes at most one SERVER name.");
  const [server] = positionals;
  const overrides = storeOverrides(values);
  return withCatalogToRead(
    loadCommandConfig(values, overrides),
    (text) => loadCommandConfig(values, overrides, text),
    (config) => listTools(config, server, Boolean(values.json)),
  );
}

async function listTools(config: ResolvedConfig, server: string | undefined, json: boolean): Promise<number> {
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
    if (json) {
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
}
