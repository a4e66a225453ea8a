import type { ServerConfig } from "../config/parse-server.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import { type ServerMentions, serverMentions } from "../security/poisoning-scan.ts";
import { describeServers, type ServerSketch, serverLine } from "../server/tools/search-description.ts";

/**
 * What retrieve_tools' description is made from (server/tools/search-description.ts), read from
 * the catalog in one walk over the counted servers: for each, what decides its line (its approved
 * tools by hash and its instructions: `key`) and its size. The tools' texts, which are definitions
 * read from the catalog file, are read only for the servers that get a line of their own (a few
 * dozen of any number), and only when that line is not kept from the last text.
 */
export interface DescribedSource {
  catalog: Pick<
    ToolCatalog,
    "names" | "get" | "definitionOf" | "shownHash" | "isQuarantined" | "instructions" | "capabilities"
  >;
  /** The servers as configured now. */
  servers: () => readonly ServerConfig[];
}

export interface DescribedServer extends ServerSketch {
  /** Everything the server's line depends on: the same key, the same line. */
  key: string;
  toolCount: number;
}

/** The servers that count: enabled, not waiting for a person, not held whole. */
function countedServers(source: DescribedSource): ServerConfig[] {
  return source
    .servers()
    .filter(
      (server) =>
        server.enabled && !server.awaitingApproval && !source.catalog.capabilities?.serverHold(server.name),
    );
}

/** Each counted server with its approved tools (as agents are shown them), their texts read when asked. */
export function describedServers(source: DescribedSource): DescribedServer[] {
  const { catalog } = source;
  const texts = catalog.instructions?.all();
  return countedServers(source).map((server) => {
    const instructions = texts?.get(server.name);
    const approved = catalog
      .names(server.name)
      .sort()
      .flatMap((name) => {
        const tool = catalog.get(name);
        return tool && !catalog.isQuarantined(tool) ? [tool] : [];
      });
    let tools: ServerSketch["tools"] | undefined;
    return {
      name: server.name,
      instructions,
      key: JSON.stringify([
        server.name,
        instructions ?? "",
        approved.map((tool) => `${tool.name}:${catalog.shownHash(tool)}`),
      ]),
      toolCount: approved.length,
      get tools() {
        tools ??= approved.flatMap((tool) => {
          const definition = catalog.definitionOf(tool);
          return definition ? [{ name: definition.name, description: definition.description }] : [];
        });
        return tools;
      },
    };
  });
}

/** What decides the whole text: every counted server's key, in an order of their own. */
export function stampOf(servers: readonly DescribedServer[]): string {
  return JSON.stringify(servers.map((server) => server.key).sort());
}

export function descriptionStamp(source: DescribedSource): string {
  return stampOf(describedServers(source));
}

/**
 * Builds the text; each server's line is kept while its key is the same (the scan is not free),
 * and the pattern of server names the scan needs is made only when a line is, once per list.
 */
export function createDescriptionBuilder(): (servers: readonly DescribedServer[]) => string {
  let lines = new Map<string, string>();
  let mentions: { names: string; of: ServerMentions } | undefined;
  return (servers) => {
    const mentionsNow = () => {
      const names = servers.map((server) => server.name);
      const joined = names.join("\n");
      if (mentions?.names !== joined) mentions = { names: joined, of: serverMentions(names) };
      return mentions.of;
    };
    const next = new Map<string, string>();
    const text = describeServers(servers, (server) => {
      const { key } = server;
      const line = lines.get(key) ?? next.get(key) ?? serverLine(server, mentionsNow());
      next.set(key, line);
      return line;
    });
    lines = next;
    return text;
  };
}
