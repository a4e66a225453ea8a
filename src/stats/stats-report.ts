import type { ToolStats } from "./call-record.ts";
import type { RerankFigures } from "./rerank-stats.ts";

/** Totals and rankings for tools_stat and `mcpproxy stats`. */
export function statsReport(
  all: readonly ToolStats[],
  options: {
    server?: string | undefined;
    top?: number | undefined;
    indexedTools: number;
    servers: number;
    /** The chat model of `llm` search mode, per model; none shown when empty. */
    reranks?: readonly RerankFigures[] | undefined;
  },
) {
  const tools = all.filter((t) => !options.server || t.server === options.server);
  const calls = tools.reduce((sum, t) => sum + t.calls, 0);
  const successes = tools.reduce((sum, t) => sum + t.successes, 0);
  const top = options.top ?? 10;
  const rate = (t: ToolStats) => (t.calls ? Math.round((t.successes / t.calls) * 1000) / 1000 : 0);
  return {
    totals: {
      indexedTools: options.indexedTools,
      servers: options.servers,
      toolsCalled: tools.length,
      calls,
      successes,
      failures: calls - successes,
      limited: tools.reduce((sum, t) => sum + t.limited, 0),
    },
    top: [...tools]
      .sort((a, b) => b.calls - a.calls || a.server.localeCompare(b.server) || a.tool.localeCompare(b.tool))
      .slice(0, top)
      .map((t) => ({ ...t, successRate: rate(t) })),
    failing: tools
      .filter((t) => t.successes < t.calls)
      .sort((a, b) => rate(a) - rate(b) || b.calls - a.calls)
      .slice(0, top)
      .map((t) => ({ ...t, successRate: rate(t) })),
    /** The tools whose calls the servers' call limits refused most (src/limits/). */
    limited: tools
      .filter((t) => t.limited > 0)
      .sort(
        (a, b) => b.limited - a.limited || a.server.localeCompare(b.server) || a.tool.localeCompare(b.tool),
      )
      .slice(0, top)
      .map((t) => ({ server: t.server, tool: t.tool, limited: t.limited, calls: t.calls })),
    ...(options.reranks?.length ? { llmRerank: options.reranks } : {}),
  };
}
