import type { CallToolResult, Tool } from "@modelcontextprotocol/server";
import * as v from "valibot";
import { isProxyError } from "../../errors.ts";
import type { CatalogTool } from "../../index/catalog-types.ts";
import { approvedTool, publicDefinition } from "../../index/retrieve-tools.ts";
import { type Alternative, alternativesFor } from "../calls/fallback-suggestions.ts";
import { errorResult } from "../calls/forwarded-call.ts";
import type { ProxyServerDeps } from "../proxy-deps.ts";
import { RESERVED_TOOL_NAMES, RETRIEVE_TOOLS } from "./builtin-tools.ts";

/**
 * `get_tool_alternatives {name}`: the fallback list a failed call carries, on demand (Gobby design
 * §4), so an agent can plan around a tool before it fails, or after a failure it did not see the
 * list of. The same ranking as the failed call's (fallback-suggestions.ts): similar tools weighted by
 * success rate, other servers first while the tool's own server is down, never a quarantined tool,
 * one of a server that is down, or one that may change more (tool-risk.ts); each with its
 * definition, so the agent can call it at once.
 */
export const GET_TOOL_ALTERNATIVES = "get_tool_alternatives";
if (!RESERVED_TOOL_NAMES.has(GET_TOOL_ALTERNATIVES))
  throw new Error("get_tool_alternatives must be a reserved tool name");

export const ToolAlternativesArgs = v.object({
  name: v.pipe(v.string("name must be a string"), v.nonEmpty("name must not be empty")),
});

export const toolAlternativesDefinition: Tool = {
  name: GET_TOOL_ALTERNATIVES,
  title: "Alternatives to a tool",
  description:
    "Other tools that may do what a given tool does, best first: similar tools weighted by how often they " +
    "succeed, tools of other servers first while the tool's own server is down. Each comes with its input " +
    "schema and why it was chosen; never a tool that may change more than the given one. Use it when a tool " +
    "fails or its server is down.",
  inputSchema: {
    type: "object",
    properties: {
      name: { type: "string", description: "The tool's name as retrieve_tools returned it (server__tool)." },
    },
    required: ["name"],
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
};

interface ToolAlternatives {
  name: string;
  server: string;
  /** The state of the tool's server now (upstream_servers list has the same). */
  serverState: string;
  alternatives: (Alternative & ReturnType<typeof publicDefinition>)[];
  hint?: string;
  [key: string]: unknown;
}

export async function toolAlternatives(
  deps: Pick<ProxyServerDeps, "catalog" | "pool" | "observe" | "firstIndexing">,
  name: string,
): Promise<CallToolResult> {
  let named: CatalogTool | undefined = deps.catalog.get(name);
  if (!named && deps.firstIndexing) {
    await deps.firstIndexing;
    named = deps.catalog.get(name);
  }
  const tool = named;
  if (!tool) {
    return errorResult(
      `No tool named ${name}. Use ${RETRIEVE_TOOLS} to find tools and pass the name it returns.`,
    );
  }
  let found: Alternative[];
  try {
    found = await alternativesFor(deps, tool);
  } catch (error) {
    if (isProxyError(error)) return errorResult(error.message);
    throw error;
  }
  const alternatives = found.flatMap((alternative) => {
    // Looked up again: a tool quarantined since the search is never offered.
    const approved = approvedTool(deps.catalog, alternative.name);
    return approved ? [{ ...publicDefinition(approved.tool, approved.definition), ...alternative }] : [];
  });
  const result: ToolAlternatives = {
    name: tool.name,
    server: tool.server,
    serverState: deps.pool.status().find((status) => status.name === tool.server)?.state ?? "removed",
    alternatives,
  };
  if (alternatives.length === 0) {
    result.hint =
      `No other usable tool matches ${tool.name} closely enough. Describe what you want to do to ` +
      `${RETRIEVE_TOOLS} in other words.`;
  }
  return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
}
