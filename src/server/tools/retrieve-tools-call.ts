import type { CallToolResult, Tool } from "@modelcontextprotocol/server";
import type * as v from "valibot";
import { isProxyError } from "../../errors.ts";
import type { RetrievedTool } from "../../index/retrieve-tools.ts";
import type { SessionRouting } from "../../routing/session-routing.ts";
import { errorResult } from "../calls/forwarded-call.ts";
import type { ProxyServerDeps } from "../proxy-deps.ts";
import type { retrieveToolsArgs } from "./builtin-tools.ts";
import { retrieveRankedAll } from "./ranked-retrieve.ts";
import { answerOf, listsOf, registrationOrder } from "./search-answer.ts";
import { searchWhileConnecting } from "./search-while-connecting.ts";
import { withUsageFigures } from "./usage-figures.ts";

/** Registered tools a dynamic session keeps, unless `toolsLimit` says otherwise. */
export const DEFAULT_TOOLS_LIMIT = 15;

/** A search hit as a tool of its own, for tools/list in dynamic routing. */
export function registeredToolOf(hit: Omit<RetrievedTool, "score">): Tool {
  return {
    name: hit.name,
    ...(hit.title ? { title: hit.title } : {}),
    description: hit.description,
    inputSchema: hit.inputSchema as Tool["inputSchema"],
    ...(hit.outputSchema ? { outputSchema: hit.outputSchema as Tool["outputSchema"] } : {}),
    ...(hit.annotations ? { annotations: hit.annotations } : {}),
  };
}

/**
 * One retrieve_tools call: its requests ranked (one list each, or the one list of a single query),
 * with usage figures when asked, answered while servers still connect, and in dynamic routing the
 * hits registered as tools of the session (rank by rank across the lists).
 */
export async function retrieveToolsCall(
  deps: ProxyServerDeps,
  asked: v.InferOutput<ReturnType<typeof retrieveToolsArgs>>,
  session: SessionRouting | undefined,
  notifyListChanged: () => Promise<void>,
): Promise<{ result: CallToolResult; shown?: ReadonlySet<string> }> {
  const { queries, isBatch, topK, isAdaptive, includeMetrics, notes } = asked;
  try {
    // MCPPROXY_TOP_K is the most an agent gets: the operator bounds what a search adds to the context.
    const result = await searchWhileConnecting({
      search: async () =>
        answerOf(
          (
            await retrieveRankedAll(deps.catalog, deps.plugins, queries, {
              topK,
              minScore: deps.search.minScore,
              prior: deps.search.prior,
              rerank: deps.search.rerank,
              isAdaptive: isAdaptive ?? deps.search.adaptiveTopK,
            })
          ).map((list) => (includeMetrics ? withUsageFigures(list, deps.observe?.stats) : list)),
          isBatch,
          notes,
        ),
      firstIndexing: deps.firstIndexing,
      indexedTools: () => deps.catalog.size(),
      connecting: () => deps.pool.connecting(),
    });
    const shown = new Set(listsOf(result).flatMap((list) => list.tools.map((hit) => hit.name)));
    if (session) {
      const registered = await session.register(
        registrationOrder(result, deps.routing?.toolsLimit ?? DEFAULT_TOOLS_LIMIT).flatMap((hit) => {
          const tool = deps.catalog.get(hit.name);
          return tool
            ? [
                {
                  name: hit.name,
                  score: hit.score,
                  hash: deps.catalog.shownHash(tool),
                  definition: registeredToolOf(hit),
                },
              ]
            : [];
        }),
        notifyListChanged,
      );
      if (session.state() === "dynamic") result.registered = registered;
    }
    return {
      result: { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result },
      shown,
    };
  } catch (error) {
    if (isProxyError(error)) return { result: errorResult(error.message) };
    throw error;
  }
}
