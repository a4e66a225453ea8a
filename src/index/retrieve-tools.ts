import type { SearchHit } from "../plugin-api.ts";
import type { CatalogTool, ToolCatalog } from "./tool-catalog.ts";
import type { UpstreamTool } from "./tool-document.ts";

/**
 * One hit of `retrieve_tools` and `search --json`: the shape of SPEC §5. Plugin rankers see the
 * same shape, so it is defined once, in the plugin API.
 */
export type RetrievedTool = SearchHit;

export interface RetrieveToolsResult {
  query: string;
  tools: RetrievedTool[];
  /** Present only when nothing matched: what to try instead. */
  hint?: string;
  [key: string]: unknown;
}

export const NO_MATCH_HINT =
  "No tool matched well enough. Describe the action in other words (a verb and an object, e.g. 'send email'), " +
  "or check that the server that has the tool is configured and was indexed.";
export const EMPTY_CATALOG_HINT =
  "No tools are indexed yet: no upstream server has been reached. Check the server list in the config " +
  "and the proxy's log, or run `mcpproxy index`.";

/** Searches the catalog and shapes the answer the agent sees; best match first. */
export async function retrieveTools(
  catalog: ToolCatalog,
  query: string,
  topK: number,
  minScore = 0,
): Promise<RetrieveToolsResult> {
  const ranked = await catalog.search(query, topK, minScore);
  const tools = ranked.map(({ tool, definition, score }) => ({
    ...publicDefinition(tool, definition),
    score: roundScore(score),
  }));
  return resultOf(catalog, query, tools);
}

/** The retrieve_tools result for these tools: with a hint that says what to try when there are none. */
export function resultOf(catalog: ToolCatalog, query: string, tools: RetrievedTool[]): RetrieveToolsResult {
  if (tools.length > 0) return { query, tools };
  return { query, tools, hint: catalog.size() === 0 ? EMPTY_CATALOG_HINT : NO_MATCH_HINT };
}

export function roundScore(score: number): number {
  return Math.round(score * 10_000) / 10_000;
}

/**
 * A catalog tool as the agent sees it: under its public name, with everything the upstream
 * declared that helps to choose and call it safely. Shared by retrieve_tools and the tools
 * registered in dynamic routing, so both show the same definition.
 */
export function publicDefinition(tool: CatalogTool, definition: UpstreamTool): Omit<RetrievedTool, "score"> {
  const { title, annotations, outputSchema } = definition;
  return {
    name: tool.name,
    server: tool.server,
    tool: tool.tool,
    description: definition.description ?? "",
    inputSchema: definition.inputSchema,
    ...(typeof title === "string" ? { title } : {}),
    ...(isObject(annotations) ? { annotations } : {}),
    ...(isObject(outputSchema) ? { outputSchema } : {}),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
