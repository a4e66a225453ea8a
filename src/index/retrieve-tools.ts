import type { SearchHit } from "../plugin-api.ts";
import type { UpstreamTool } from "../upstream-tool.ts";
import type { CatalogTool } from "./catalog-types.ts";
import type { ToolCatalog } from "./tool-catalog.ts";

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
  /** What was changed in the request to answer it (top_k clamped, a long query cut). */
  notes?: string[];
  /** Matching tools left out because they wait for a person's approval. */
  awaitingApproval?: AwaitingApproval;
  [key: string]: unknown;
}

const NO_MATCH_HINT =
  "No tool matched well enough. Describe the action in other words (a verb and an object, e.g. 'send email'), " +
  "or check that the server that has the tool is configured and was indexed.";
const EMPTY_CATALOG_HINT =
  "No tools are indexed yet: no upstream server has been reached. Check the server list in the config " +
  "and the proxy's log, or run `mcpproxy index`.";

/**
 * Quarantined tools that matched: how many, their servers and the command that approves them. Only
 * that: their names and descriptions are the upstream's untrusted text until a person approves them.
 */
export interface AwaitingApproval {
  tools: number;
  servers: string[];
  /** For the user, not the agent: the agent cannot approve. */
  command: string;
}

/** `retrieveTools` of several requests in one pass of the catalog, answered in their order. */
export async function retrieveToolsAll(
  catalog: ToolCatalog,
  queries: readonly string[],
  topK: number,
  minScore = 0,
): Promise<RetrieveToolsResult[]> {
  const found = await catalog.searchAllWithHeld(queries, topK, minScore);
  return found.map(({ hits, held }, i) => {
    const tools = hits.map(({ tool, definition, score }) => ({
      ...publicDefinition(tool, definition),
      score: roundScore(score),
    }));
    return resultOf(catalog, queries[i]!, tools, awaitingApprovalOf(held));
  });
}

function awaitingApprovalOf(held: readonly CatalogTool[]): AwaitingApproval | undefined {
  if (held.length === 0) return undefined;
  const servers = [...new Set(held.map((tool) => tool.server))].sort();
  return { tools: held.length, servers, command: `mcpproxy approve ${servers.join(" ")}` };
}

/** Said when every tool that matched waits for approval. */
function awaitingApprovalHint(awaiting: AwaitingApproval): string {
  return (
    `No approved tool matched, but ${awaiting.tools} matching tool(s) of ${awaiting.servers.join(", ")} ` +
    "wait for a person's approval (new, or changed since they were approved), so they are not shown or run. " +
    `Ask the user to review them with \`mcpproxy approve\` and approve them with \`${awaiting.command}\`.`
  );
}

/** The retrieve_tools result for these tools: with a hint that says what to try when there are none. */
export function resultOf(
  catalog: ToolCatalog,
  query: string,
  tools: RetrievedTool[],
  awaiting?: AwaitingApproval,
): RetrieveToolsResult {
  const result: RetrieveToolsResult = { query, tools };
  if (awaiting) result.awaitingApproval = awaiting;
  if (tools.length > 0) return result;
  result.hint = awaiting
    ? awaitingApprovalHint(awaiting)
    : catalog.size() === 0
      ? EMPTY_CATALOG_HINT
      : NO_MATCH_HINT;
  return result;
}

export function roundScore(score: number): number {
  return Math.round(score * 10_000) / 10_000;
}

/** A tool by its public name with its definition as listed, unless it is held for approval. */
export function approvedTool(
  catalog: ToolCatalog,
  name: string,
): { tool: CatalogTool; definition: UpstreamTool } | undefined {
  const tool = catalog.get(name);
  const definition = tool && !catalog.isQuarantined(tool) ? catalog.definitionOf(tool) : undefined;
  return tool && definition ? { tool, definition } : undefined;
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
