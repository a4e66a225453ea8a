import type { Reranker } from "../index/llm-rerank.ts";
import {
  approvedTool,
  publicDefinition,
  type RetrievedTool,
  type RetrieveToolsResult,
  resultOf,
  retrieveTools,
  roundScore,
} from "../index/retrieve-tools.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { PluginRunner } from "../plugins/plugin-runner.ts";
import { boundQuery } from "./builtin-tools.ts";

/**
 * retrieve_tools with the plugins' rankers over its hits: the one place `rankResults` runs, for
 * the MCP tool and `mcpproxy search` alike. Rankers see up to RANKER_CANDIDATES candidates, so
 * they can lift a tool from below the top K; the answer is then cut to K. A ranker may return any
 * indexed tool by name, but each entry is rebuilt from the catalog: it can reorder and re-score,
 * never invent a tool or change a definition. In `llm` search mode the chat model re-ranks the
 * search's best candidates (after the learned prior, before the plugins: it is part of the search
 * they rank), and can only reorder and drop them (src/index/llm-rerank.ts).
 */
export const RANKER_CANDIDATES = 20;

export async function retrieveRanked(
  catalog: ToolCatalog,
  plugins: PluginRunner | undefined,
  asked: string,
  topK: number,
  minScore: number,
  ranking: RankingOptions = {},
): Promise<RetrieveToolsResult> {
  const { query, note } = boundQuery(asked);
  const result = await rankedFor(catalog, plugins, query, topK, minScore, ranking);
  if (note) result.notes = [note];
  return result;
}

export interface RankingOptions {
  /** The learned prior of a tool (src/stats/usage-prior.ts), added to its score; unset, none. */
  prior?: ((server: string, tool: string) => number) | undefined;
  /** The chat model of `llm` search mode; unset, none. */
  rerank?: Reranker | undefined;
}

async function rankedFor(
  catalog: ToolCatalog,
  plugins: PluginRunner | undefined,
  query: string,
  topK: number,
  minScore: number,
  { prior, rerank }: RankingOptions,
): Promise<RetrieveToolsResult> {
  if (!plugins?.has("rankResults") && !prior && !rerank) return retrieveTools(catalog, query, topK, minScore);
  const depth = Math.max(topK, RANKER_CANDIDATES, rerank?.candidates ?? 0);
  const wide = await retrieveTools(catalog, query, depth, minScore);
  if (prior) {
    // Stable: tools the prior does not move keep the search's order (the merged steps of a multi-step request included).
    wide.tools = wide.tools
      .map((tool) => ({
        ...tool,
        score: roundScore(Math.min(1, Math.max(0, tool.score + prior(tool.server, tool.tool)))),
      }))
      .sort((a, b) => b.score - a.score);
  }
  if (rerank) wide.tools = await rerank.rerank(wide.query, wide.tools);
  if (!plugins?.has("rankResults"))
    return resultOf(catalog, wide.query, wide.tools.slice(0, topK), wide.awaitingApproval);
  const ranked = await plugins.rankResults({ query: wide.query, hits: wide.tools });
  if (!ranked) return resultOf(catalog, wide.query, wide.tools.slice(0, topK), wide.awaitingApproval);
  const found = new Map(wide.tools.map((tool) => [tool.name, tool]));
  const tools: RetrievedTool[] = [];
  for (const hit of ranked) {
    if (tools.length >= topK) break;
    if (tools.some((tool) => tool.name === hit.name)) continue;
    const known = found.get(hit.name) ?? fromCatalog(catalog, hit.name);
    if (known) tools.push({ ...known, score: roundScore(hit.score) });
  }
  return resultOf(catalog, wide.query, tools, wide.awaitingApproval);
}

function fromCatalog(catalog: ToolCatalog, name: string): RetrievedTool | undefined {
  const approved = approvedTool(catalog, name);
  return approved ? { ...publicDefinition(approved.tool, approved.definition), score: 0 } : undefined;
}
