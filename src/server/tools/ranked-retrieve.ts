import { adaptiveCount, FALL_OFF } from "../../index/adaptive-top-k.ts";
import type { Reranker } from "../../index/llm-rerank.ts";
import { searchedText } from "../../index/query-text.ts";
import {
  approvedTool,
  publicDefinition,
  type RetrievedTool,
  type RetrieveToolsResult,
  resultOf,
  retrieveToolsAll,
  roundScore,
} from "../../index/retrieve-tools.ts";
import type { ToolCatalog } from "../../index/tool-catalog.ts";
import type { PluginRunner } from "../../plugins/plugin-runner.ts";
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
const RANKER_CANDIDATES = 20;

/** What re-ranks the search's hits. */
export interface RankingOptions {
  /** The learned prior of a tool (src/stats/usage-prior.ts), added to its score; unset, none. */
  prior?: ((server: string, tool: string) => number) | undefined;
  /** The chat model of `llm` search mode; unset, none. */
  rerank?: Reranker | undefined;
}

/** How retrieve_tools ranks: the most tools a list holds, the relevance floor, and what re-ranks them. */
export interface RankOptions extends RankingOptions {
  topK: number;
  minScore: number;
  /** Cut each list where its scores fall off from the best (adaptive-top-k.ts); topK stays the most. */
  isAdaptive?: boolean | undefined;
}

export async function retrieveRanked(
  catalog: ToolCatalog,
  plugins: PluginRunner | undefined,
  asked: string,
  topK: number,
  minScore: number,
  ranking: RankingOptions = {},
): Promise<RetrieveToolsResult> {
  return (await retrieveRankedAll(catalog, plugins, [asked], { topK, minScore, ...ranking }))[0]!;
}

/**
 * One ranked list per request, in their order, from one pass of the catalog (retrieveToolsAll).
 * The prior, the rankers and the adaptive cut apply to each list on its own; the rankers of all
 * lists run at once, so a ranker that waits on I/O costs a batch one wait, not one per request.
 */
export async function retrieveRankedAll(
  catalog: ToolCatalog,
  plugins: PluginRunner | undefined,
  asked: readonly string[],
  options: RankOptions,
): Promise<RetrieveToolsResult[]> {
  const bounded = asked.map(boundQuery);
  const isReranked = Boolean(plugins?.has("rankResults") || options.prior || options.rerank);
  const depth = isReranked
    ? Math.max(options.topK, RANKER_CANDIDATES, options.rerank?.candidates ?? 0)
    : options.topK;
  const found = await retrieveToolsAll(
    catalog,
    bounded.map(({ query }) => query),
    depth,
    options.minScore,
  );
  return Promise.all(
    found.map(async (wide, i) => {
      const result = isReranked ? await reranked(catalog, plugins, wide, options) : wide;
      const notes = [bounded[i]!.note, options.isAdaptive ? cutWhereScoresFallOff(result) : undefined];
      if (notes.some(Boolean)) result.notes = notes.filter((note) => note !== undefined);
      return result;
    }),
  );
}

/** Cuts the list after its best hits (adaptive-top-k.ts); says how many were left out, if any. */
function cutWhereScoresFallOff(result: RetrieveToolsResult): string | undefined {
  const kept = adaptiveCount(
    result.tools.map((tool) => tool.score),
    searchedText(result.query),
  );
  const dropped = result.tools.length - kept;
  if (dropped <= 0) return undefined;
  result.tools = result.tools.slice(0, kept);
  return (
    `${dropped} weaker match${dropped === 1 ? "" : "es"} left out: scored under ${FALL_OFF * 100}% of the best ` +
    "(adaptive top-k). Ask again with adaptive: false to get them."
  );
}

async function reranked(
  catalog: ToolCatalog,
  plugins: PluginRunner | undefined,
  wide: RetrieveToolsResult,
  { topK, prior, rerank }: RankOptions,
): Promise<RetrieveToolsResult> {
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
