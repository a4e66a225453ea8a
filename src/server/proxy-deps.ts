import type { Reranker } from "../index/llm-rerank.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { PrincipalQuotas } from "../limits/principal-quotas.ts";
import type { Logger } from "../log.ts";
import type { PluginRunner } from "../plugins/plugin-runner.ts";
import type { AllTools } from "../routing/all-tools.ts";
import type { SessionRegistry } from "../routing/session-registry.ts";
import type { RoutingMode } from "../routing/session-routing.ts";
import type { CallStats } from "../stats/call-record.ts";
import type { Tracer } from "../tracing/tracer.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
import type { ArgumentValidator } from "./calls/argument-validator.ts";
import type { FallbackPolicy } from "./calls/fallback-retry.ts";
import type { InputRounds } from "./calls/input-rounds.ts";
import type { ProxyMetrics } from "./observe/metrics.ts";
import type { ResultSpill } from "./results/result-spill.ts";
import type { SearchableServers } from "./tools/search-description.ts";
import type { ServerEditor } from "./tools/upstream-servers-tool.ts";
import type { ClientSessions } from "./transport/client-sessions.ts";

/**
 * What the proxy's MCP server is made of: proxy-server.ts builds one per client session from it.
 * Every server needs the catalog, the pool and a logger; each capability takes its own group, and
 * an unset group turns that capability off. Types only, apart from the server that uses them, so
 * the helpers that take them never import the module that uses them.
 */
export interface ProxyServerDeps {
  catalog: ToolCatalog;
  pool: UpstreamPool;
  logger: Logger;
  /** The user's plugins, at the two seams: around a forwarded call, and over a search's hits. */
  plugins?: PluginRunner | undefined;
  /**
   * Settles when the first indexing pass is over. Set only when the proxy started with an empty
   * index: then a search that finds nothing yet, or a call of a tool not indexed yet, waits for it
   * rather than answering "no tools" on a first run (search-while-connecting.ts).
   */
  firstIndexing?: Promise<unknown> | undefined;
  /** How retrieve_tools ranks, and what its description says it can find. */
  search: SearchDeps;
  /** Which tools a session sees and may call by name; unset, `call-tool` routing. */
  routing?: RoutingDeps | undefined;
  /** What wraps a forwarded call; unset, the call goes as it is. */
  calls?: CallDeps | undefined;
  /** The servers of a running proxy, for `upstream_servers` (serve only); `readOnly` hides changes. */
  servers?: { manager: ServerEditor; readOnly: boolean; configPath: string } | undefined;
  /**
   * Every client session, for what upstreams send back (sampling, elicitation, roots, log
   * messages, resource updates) and for resources, prompts, completion and logging. Unset, the
   * proxy serves tools only.
   */
  clients?: ClientSessions | undefined;
  /** What the proxy counts and tells about its calls; unset, nothing is recorded. */
  observe?: ObserveDeps | undefined;
}

interface SearchDeps {
  topK: number;
  /** Hits scoring below this (0–1) are left out: an empty answer with a hint beats filler. */
  minScore: number;
  /** Cut each ranked list where its scores fall off (`mcpproxy.adaptiveTopK`); a call's `adaptive` wins. */
  adaptiveTopK?: boolean | undefined;
  /** The learned prior of each tool (`mcpproxy.learnedPrior`), added to its search score. */
  prior?: ((server: string, tool: string) => number) | undefined;
  /** The chat model that re-ranks searches in `llm` search mode (`mcpproxy.search`). */
  rerank?: Reranker | undefined;
  /**
   * What retrieve_tools can find, for its description (search-description.ts); it changes as
   * servers come and go, and clients are told (tools.listChanged is then declared). Unset, fixed text.
   */
  searchable?: SearchableServers | undefined;
}

interface RoutingDeps {
  /** `call-tool` (default), `dynamic`, `auto` (those two need `sessions`) or `all` (needs `allTools`). */
  mode?: RoutingMode | undefined;
  /** `--routing all`: every approved tool listed (routing/all-tools.ts). */
  allTools?: AllTools | undefined;
  /** How many tools one session may have registered (dynamic routing). */
  toolsLimit?: number | undefined;
  sessions?: SessionRegistry | undefined;
  /**
   * `serve --passthrough SERVER`: the client sees that one server's tools, prompts and resources
   * under their own names (no retrieve_tools or call_tool), with the rest of the proxy in the path.
   */
  passthrough?: string | undefined;
}

interface CallDeps {
  /** Checks arguments against the tool's input schema before a call is forwarded. */
  arguments?: ArgumentValidator | undefined;
  /** `autoRetryFallback` (fallback-retry.ts); unset, a failed call is never retried elsewhere. */
  fallback?: FallbackPolicy | undefined;
  /** Per-principal call quotas (`mcpproxy.httpAuth`); unset, none. */
  quotas?: PrincipalQuotas | undefined;
  /**
   * Multi-round-trip requests (input-rounds.ts): the seal of the proxy's requestState and the calls
   * parked for a 2026 client's input. Unset, a 2026 upstream's input_required fails the call.
   */
  inputRounds?: InputRounds | undefined;
  /** Large results kept out of the context (`resultSpillBytes`; result-spill.ts); unset, off. */
  results?: ResultSpill | undefined;
}

interface ObserveDeps {
  /** Where calls are counted (stats.db); unset, nothing is recorded. */
  stats?: CallStats | undefined;
  /** Prometheus metrics (`mcpproxy.metrics`). */
  metrics?: ProxyMetrics | undefined;
  /** OpenTelemetry spans of tool calls, prompts/get and resources/read (`mcpproxy.traces`); unset, none. */
  traces?: Tracer | undefined;
}
