import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import * as v from "valibot";
import { describeError, isProxyError } from "../errors.ts";
import { retrieveTools } from "../index/retrieve-tools.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { Logger } from "../log.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
import { PRODUCT, VERSION } from "../version.ts";
import {
  BUILTIN_TOOL_NAMES,
  builtinToolDefinitions,
  CALL_TOOL,
  CallToolArgs,
  describeIssues,
  RETRIEVE_TOOLS,
  retrieveToolsArgs,
} from "./builtin-tools.ts";
import { loose, strictly } from "./strict-params.ts";

/**
 * The MCP server the agent talks to. Transport-agnostic: stdio and HTTP each create one per
 * session with `createProxyServer`. Every failure a tool call can meet becomes an `isError`
 * result the agent can read and act on; only protocol misuse becomes a JSON-RPC error.
 */
export interface ProxyServerDeps {
  catalog: ToolCatalog;
  pool: UpstreamPool;
  topK: number;
  /** Hits scoring below this (0–1) are left out: an empty answer with a hint beats filler. */
  minScore: number;
  logger: Logger;
  /**
   * Settles when the first indexing pass is over. Set only when the proxy started with an empty
   * index: then a search or call waits for it rather than answering "no tools" on a first run.
   */
  firstIndexing?: Promise<unknown> | undefined;
}

export const INSTRUCTIONS =
  "This server is a gateway to many MCP servers. Their tools are not listed directly: call retrieve_tools " +
  "with what you want to do, then call_tool with the name it returns and the arguments its schema asks for.";

export function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

export function createProxyServer(deps: ProxyServerDeps): Server {
  const server = new Server(
    { name: PRODUCT, version: VERSION, title: "mcpproxy" },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
  );
  const tools = builtinToolDefinitions(deps.topK);
  const RetrieveToolsArgs = retrieveToolsArgs(deps.topK);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));

  server.setRequestHandler(loose(CallToolRequestSchema), async (raw, extra): Promise<CallToolResult> => {
    const { name, arguments: args } = strictly(CallToolRequestSchema, raw).params;
    if (name === RETRIEVE_TOOLS) {
      const parsed = v.safeParse(RetrieveToolsArgs, args ?? {});
      if (!parsed.success) return errorResult(describeIssues(RETRIEVE_TOOLS, parsed.issues));
      await deps.firstIndexing;
      // MCPPROXY_TOP_K is the most an agent gets: the operator bounds what a search adds to the context.
      const result = await retrieveTools(
        deps.catalog,
        parsed.output.query,
        parsed.output.top_k ?? deps.topK,
        deps.minScore,
      );
      return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
    }
    if (name === CALL_TOOL) {
      const parsed = v.safeParse(CallToolArgs, args ?? {});
      if (!parsed.success) return errorResult(describeIssues(CALL_TOOL, parsed.issues));
      return forwardCall(deps, parsed.output.name, parsed.output.arguments, extra.signal);
    }
    return errorResult(
      `No tool named ${name}. This proxy offers ${[...BUILTIN_TOOL_NAMES].join(" and ")}: ` +
        `use ${RETRIEVE_TOOLS} to find tools and ${CALL_TOOL} to run them.`,
    );
  });
  return server;
}

async function forwardCall(
  deps: ProxyServerDeps,
  name: string,
  args: Record<string, unknown> | undefined,
  signal: AbortSignal,
): Promise<CallToolResult> {
  let target = deps.catalog.get(name);
  if (!target && deps.firstIndexing) {
    await deps.firstIndexing;
    target = deps.catalog.get(name);
  }
  if (!target) {
    return errorResult(
      `No tool named ${name}. Use ${RETRIEVE_TOOLS} to find tools and pass the name it returns.`,
    );
  }
  try {
    return await deps.pool.callTool(target.server, target.tool, args, signal);
  } catch (error) {
    if (error instanceof McpError) {
      return errorResult(`Server ${target.server} rejected ${target.tool}: ${error.message}`);
    }
    if (isProxyError(error)) return errorResult(error.message);
    deps.logger.error(`call to ${name} failed`, { error: describeError(error) });
    return errorResult(`Calling ${name} failed: ${describeError(error)}`);
  }
}
