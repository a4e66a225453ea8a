import type { Tool } from "@modelcontextprotocol/server";
import * as v from "valibot";
import type { ToolCatalog } from "../../index/tool-catalog.ts";
import type { CallStats } from "../../stats/call-record.ts";
import { statsReport } from "../../stats/stats-report.ts";
import type { UpstreamPool } from "../../upstream/upstream-pool.ts";
import { RESERVED_TOOL_NAMES } from "./builtin-tools.ts";

/**
 * `tools_stat`: how the tools behind the proxy have done (SPEC §5): totals, the most used tools and
 * the failing ones, with success rate and latency. Read-only for agents; `mcpproxy stats --reset`
 * is how a person clears figures.
 */
export const TOOLS_STAT = "tools_stat";
if (!RESERVED_TOOL_NAMES.has(TOOLS_STAT)) throw new Error("tools_stat must be a reserved tool name");

export const ToolsStatArgs = v.object({
  server: v.optional(v.pipe(v.string("server must be a string"), v.nonEmpty("server must not be empty"))),
  top: v.optional(
    v.pipe(
      v.number("top must be a number"),
      v.integer("top must be a whole number"),
      v.minValue(1, "top must be at least 1"),
      v.maxValue(100, "top must be at most 100"),
    ),
  ),
});

export const toolsStatDefinition: Tool = {
  name: TOOLS_STAT,
  title: "Tool statistics",
  description:
    "How the tools behind this proxy have done: calls, success rate, mean and p95 latency, for the most used " +
    "tools and the failing ones, with totals, the last error your own calls met, and the call limits set on servers " +
    "(in flight, queued, refused). Use it to prefer tools that work. " +
    "With an LLM search mode, also the chat model's requests, latency and tokens.",
  inputSchema: {
    type: "object",
    properties: {
      server: { type: "string", description: "Only this server's tools." },
      top: { type: "integer", minimum: 1, maximum: 100, description: "How many tools per list (10)." },
    },
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
};

/**
 * The figures of every call, with the error texts of this session's own calls only: another
 * session's last error may quote what it sent or got back.
 */
export function toolsStat(
  args: v.InferOutput<typeof ToolsStatArgs>,
  stats: CallStats,
  catalog: ToolCatalog,
  pool: UpstreamPool,
  session: string | undefined,
  /** The caller when the HTTP listener takes access tokens: its own figures are shown apart too. */
  principal?: { key: string; subject: string } | undefined,
) {
  const own = session ? stats.errorsOf(session) : new Map<string, { error: string; at: string }>();
  const figures = stats.all().map(({ lastError: _error, lastErrorAt: _at, ...tool }) => {
    const mine = own.get(`${tool.server}/${tool.tool}`);
    return mine ? { ...tool, lastError: mine.error, lastErrorAt: mine.at } : tool;
  });
  const servers = pool.status();
  // Each limited server's limits as they stand now: in flight, waiting, refused (src/limits/).
  const limits = servers.flatMap((server) =>
    server.limits && (!args.server || server.name === args.server)
      ? [{ server: server.name, ...server.limits }]
      : [],
  );
  return {
    ...statsReport(figures, {
      server: args.server,
      top: args.top,
      indexedTools: catalog.size(),
      servers: servers.length,
      reranks: stats.reranks(),
    }),
    ...(limits.length > 0 ? { limits } : {}),
    ...(principal
      ? {
          yours: {
            principal: principal.subject,
            ...statsReport(stats.ofPrincipal(principal.key), {
              server: args.server,
              top: args.top,
              indexedTools: catalog.size(),
              servers: servers.length,
            }),
          },
        }
      : {}),
  };
}
