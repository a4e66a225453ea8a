import type { CallToolResult } from "@modelcontextprotocol/server";
import type { CatalogTool } from "../../index/catalog-types.ts";
import type { ToolCatalog } from "../../index/tool-catalog.ts";
import type { CallStats } from "../../stats/call-record.ts";
import type { ServerState } from "../../upstream/pool-types.ts";
import type { UpstreamPool } from "../../upstream/upstream-pool.ts";
import { riskOf } from "./tool-risk.ts";

/**
 * When a call fails (not when the client cancelled it), up to three other tools that may do the same, so the agent can recover
 * without another search: found by searching with the failed tool's own name and description,
 * weighted by how often each has succeeded (stats.db), and, when the failed tool's server is down,
 * tools of other servers first. Tools of servers that are down (failed, waiting for a login or an
 * approval, disabled; the failed tool's own included) are left out: calling them would fail too.
 * So is a tool that may change more than the failed one (tool-risk.ts): a failed read is never
 * answered with a tool that moves or deletes. Each says why it was suggested.
 */
const MAX_ALTERNATIVES = 3;
/**
 * How closely a tool must match the failed one (the 0-1 search score) to be suggested: below it,
 * "alternatives" share a word or two with it and would send the agent the wrong way.
 */
const ALTERNATIVE_MIN_SCORE = 0.3;

/** States in which a call to the server cannot succeed now (a lazy or restarting one starts on the call). */
const DOWN_STATES: ReadonlySet<ServerState> = new Set([
  "failed",
  "needs-login",
  "awaiting-approval",
  "disabled",
]);

export interface Alternative {
  name: string;
  server: string;
  why: string;
}

/** What the suggestions need of the proxy's deps (proxy-deps.ts: the statistics of its `observe` group). */
interface Deps {
  catalog: ToolCatalog;
  pool: UpstreamPool;
  observe?: { stats?: CallStats | undefined } | undefined;
}

export async function alternativesFor(deps: Deps, failed: CatalogTool): Promise<Alternative[]> {
  const definition = deps.catalog.definitionOf(failed);
  const query = `${failed.tool.replace(/[_-]+/g, " ")} ${definition?.description ?? ""}`.slice(0, 500);
  const hits = await deps.catalog.search(query, 12, ALTERNATIVE_MIN_SCORE);
  const states = new Map(deps.pool.status().map((status) => [status.name, status.state]));
  const serverDown = states.get(failed.server) !== "connected";
  const isDown = (server: string) => {
    const state = states.get(server);
    return state === undefined || DOWN_STATES.has(state);
  };
  const record = new Map((deps.observe?.stats?.all() ?? []).map((t) => [`${t.server}\u0000${t.tool}`, t]));
  const risk = riskOf(definition);
  return hits
    .filter(
      (hit) => hit.tool.name !== failed.name && !isDown(hit.tool.server) && riskOf(hit.definition) <= risk,
    )
    .map((hit) => {
      const stats = record.get(`${hit.tool.server}\u0000${hit.tool.tool}`);
      const rate = stats?.calls ? stats.successes / stats.calls : undefined;
      const sameServer = hit.tool.server === failed.server;
      const weight = (rate === undefined ? 1 : 0.5 + 0.5 * rate) * (serverDown && sameServer ? 0.3 : 1);
      const reasons = [`similar to ${failed.name} (match ${hit.score.toFixed(2)})`];
      reasons.push(stats?.calls ? `succeeded ${stats.successes} of ${stats.calls} calls` : "not called yet");
      if (serverDown && !sameServer) reasons.push(`on ${hit.tool.server}, while ${failed.server} is down`);
      return {
        name: hit.tool.name,
        server: hit.tool.server,
        why: reasons.join("; "),
        score: hit.score * weight,
      };
    })
    .sort((a, b) => b.score - a.score)
    .slice(0, MAX_ALTERNATIVES)
    .map(({ score: _score, ...alternative }) => alternative);
}

/** The failed result with the alternatives added: a text block for the agent, and `_meta` for programs. */
export function withAlternatives(
  result: CallToolResult,
  alternatives: readonly Alternative[],
): CallToolResult {
  if (alternatives.length === 0) return result;
  const lines = alternatives.map((alternative) => `- ${alternative.name}: ${alternative.why}`);
  return {
    ...result,
    content: [
      ...(result.content ?? []),
      { type: "text", text: `Other tools that may do this (call them with call_tool):\n${lines.join("\n")}` },
    ],
    _meta: { ...result._meta, "mcpproxy/alternatives": alternatives },
  };
}
