import type {
  CallToolRequest,
  CallToolResult,
  InputRequiredResult,
  ServerContext,
} from "@modelcontextprotocol/server";
import { ProtocolError, ProtocolErrorCode, Server } from "@modelcontextprotocol/server";
import * as v from "valibot";
import { isProxyError } from "../errors.ts";
import type { Reranker } from "../index/llm-rerank.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { PrincipalQuotas } from "../limits/principal-quotas.ts";
import type { Logger } from "../log.ts";
import type { PluginRunner } from "../plugins/plugin-runner.ts";
import type { AllTools } from "../routing/all-tools.ts";
import type { SessionRegistry } from "../routing/session-registry.ts";
import { type RoutingMode, type SessionRouting, sessionlessNote } from "../routing/session-routing.ts";
import type { CallStats } from "../store/sqlite/call-stats.ts";
import type { Tracer } from "../tracing/tracer.ts";
import type { CallOptions } from "../upstream/forward-call.ts";
import { sharedSchemaValidator } from "../upstream/shared-schema-validator.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
import { PRODUCT, VERSION } from "../version.ts";
import { serveAllToolsList } from "./all-tools-list.ts";
import type { ArgumentValidator } from "./argument-validator.ts";
import {
  BUILTIN_TOOL_NAMES,
  builtinToolDefinitions,
  CALL_TOOL,
  CallToolArgs,
  describeIssues,
  RETRIEVE_TOOLS,
  retrieveToolsArgs,
} from "./builtin-tools.ts";
import { type Audience, ownHint } from "./cache-hints.ts";
import { callOptionsFor, type ForwardOptions } from "./call-options.ts";
import type { ClientSessions } from "./client-sessions.ts";
import type { FallbackPolicy } from "./fallback-retry.ts";
import { passthroughNaming } from "./federated-names.ts";
import { FEDERATED_CAPABILITIES, serveFederation } from "./federation.ts";
import { disabledMessage, errorResult, forwardCall, forwardWithRounds } from "./forwarded-call.ts";
import { type InputRounds, verifyRequestState } from "./input-rounds.ts";
import type { ProxyMetrics } from "./metrics.ts";
import { servePassthroughTools } from "./passthrough-tools.ts";
import {
  keepingOut,
  READ_RESULT,
  ReadResultArgs,
  readResult,
  readResultDefinition,
  readResultResource,
  resultScopes,
} from "./read-result-tool.ts";
import { traced } from "./request-spans.ts";
import { callerOf } from "./resource-guard.ts";
import type { ResultSpill } from "./result-spill.ts";
import { DEFAULT_TOOLS_LIMIT, retrieveToolsCall } from "./retrieve-tools-call.ts";
import type { SearchableServers } from "./search-description.ts";
import {
  GET_TOOL_ALTERNATIVES,
  ToolAlternativesArgs,
  toolAlternatives,
  toolAlternativesDefinition,
} from "./tool-alternatives-tool.ts";
import { TOOLS_STAT, ToolsStatArgs, toolsStat, toolsStatDefinition } from "./tools-stat-tool.ts";
import {
  runUpstreamServers,
  type ServerEditor,
  UPSTREAM_SERVERS,
  upstreamServersArgs,
  upstreamServersDefinition,
} from "./upstream-servers-tool.ts";

/**
 * The MCP server the agent talks to. Transport-agnostic: stdio and HTTP each create one per
 * session with `createProxyServer`. Every failure a tool call can meet becomes an `isError`
 * result the agent can read and act on; only protocol misuse becomes a JSON-RPC error.
 * Plugins run at two seams only: around a forwarded call, and over the hits of a search.
 */
export interface ProxyServerDeps {
  catalog: ToolCatalog;
  pool: UpstreamPool;
  topK: number;
  /** Hits scoring below this (0–1) are left out: an empty answer with a hint beats filler. */
  minScore: number;
  logger: Logger;
  plugins?: PluginRunner | undefined;
  /** Checks arguments against the tool's input schema before a call is forwarded. */
  arguments?: ArgumentValidator | undefined;
  /** `call-tool` (default), `dynamic`, `auto` (those two need `sessions`) or `all` (needs `allTools`). */
  routing?: RoutingMode;
  /** `--routing all`: every approved tool listed (routing/all-tools.ts). */
  allTools?: AllTools | undefined;
  /** How many tools one session may have registered (dynamic routing). */
  toolsLimit?: number;
  sessions?: SessionRegistry | undefined;
  /**
   * Every client session, for what upstreams send back (sampling, elicitation, roots, log
   * messages, resource updates) and for resources, prompts, completion and logging. Unset, the
   * proxy serves tools only.
   */
  clients?: ClientSessions | undefined;
  /** The servers of a running proxy, for `upstream_servers` (serve only); `readOnly` hides changes. */
  servers?: { manager: ServerEditor; readOnly: boolean; configPath: string } | undefined;
  /** `autoRetryFallback` (fallback-retry.ts); unset, a failed call is never retried elsewhere. */
  fallback?: FallbackPolicy | undefined;
  /** Where calls are counted (stats.db); unset, nothing is recorded. */
  stats?: CallStats | undefined;
  /** Cut each ranked list where its scores fall off (`mcpproxy.adaptiveTopK`); a call's `adaptive` wins. */
  adaptiveTopK?: boolean | undefined;
  /** The learned prior of each tool (`mcpproxy.learnedPrior`), added to its search score. */
  prior?: ((server: string, tool: string) => number) | undefined;
  /** The chat model that re-ranks searches in `llm` search mode (`mcpproxy.search`). */
  rerank?: Reranker | undefined;
  /** Prometheus metrics (`mcpproxy.metrics`). */
  metrics?: ProxyMetrics | undefined;
  /**
   * Settles when the first indexing pass is over. Set only when the proxy started with an empty
   * index: then a search that finds nothing yet, or a call of a tool not indexed yet, waits for it
   * rather than answering "no tools" on a first run (search-while-connecting.ts).
   */
  firstIndexing?: Promise<unknown> | undefined;
  /**
   * `serve --passthrough SERVER`: the client sees that one server's tools, prompts and resources
   * under their own names (no retrieve_tools or call_tool), with the rest of the proxy in the path.
   */
  passthrough?: string | undefined;
  /**
   * Multi-round-trip requests (input-rounds.ts): the seal of the proxy's requestState and the calls
   * parked for a 2026 client's input. Unset, a 2026 upstream's input_required fails the call.
   */
  inputRounds?: InputRounds | undefined;
  /** Per-principal call quotas (`mcpproxy.httpAuth`); unset, none. */
  quotas?: PrincipalQuotas | undefined;
  /** OpenTelemetry spans of tool calls, prompts/get and resources/read (`mcpproxy.traces`); unset, none. */
  traces?: Tracer | undefined;
  /** Large results kept out of the context (`resultSpillBytes`; result-spill.ts); unset, off. */
  results?: ResultSpill | undefined;
  /**
   * What retrieve_tools can find, for its description (search-description.ts); it changes as
   * servers come and go, and clients are told (tools.listChanged is then declared). Unset, fixed text.
   */
  searchable?: SearchableServers | undefined;
}

export const INSTRUCTIONS =
  "This server is a gateway to many MCP servers. Their tools are not listed directly: call retrieve_tools " +
  "with what you want to do, then call_tool with the name it returns and the arguments its schema asks for.";

/** `--routing all`: the tools are listed, and the search is one way among two to find them. */
export const ALL_TOOLS_INSTRUCTIONS =
  "This server is a gateway to many MCP servers. Every approved tool of theirs is listed under the name " +
  "server__tool: call it directly. retrieve_tools searches them by what you want to do, and call_tool runs one by name.";

/**
 * Which revision a client speaks: `legacy` (2025-11-25 and older: `initialize`, one session per
 * connection) or `modern` (2026-07-28: stateless requests, each carrying its protocol version and
 * capabilities). A modern client has no session, so it gets one cacheable tools/list
 * (`retrieve_tools`, `call_tool` and the management tools) whatever `--routing` says: the revision
 * forbids a list that varies with earlier requests. It changes only with retrieve_tools'
 * description (the servers behind the proxy), announced on listen streams. Dynamic and auto
 * routing stay for legacy sessions.
 * `all` applies to both eras: its list follows the catalog, as a server's own list does, never a
 * client's earlier requests; a change reaches 2026 clients as the listen stream's tools event.
 */
export type ClientEra = "legacy" | "modern";

/**
 * How long a modern client may keep the proxy's own tools/list and server/discover answers. The
 * list changes when servers come and go; a listening client is told at once, any other sees the
 * change within this long (and gets `ttlMs: 0` while servers start or a change is under way).
 */
export const OWN_LIST_TTL_MS = 60_000;

/**
 * `audience`: who the endpoint serving this server answers (cache-hints.ts). A modern answer is
 * `public` only when every caller of that endpoint gets the same one.
 */
export function createProxyServer(deps: ProxyServerDeps, era: ClientEra, audience: Audience): Server {
  const modern = era === "modern";
  const requested = deps.routing === "all" && !deps.allTools ? "call-tool" : (deps.routing ?? "call-tool");
  const routingMode = deps.passthrough || (modern && requested !== "all") ? "call-tool" : requested;
  const allTools = routingMode === "all" ? deps.allTools : undefined;
  const listHint = ownHint(OWN_LIST_TTL_MS, audience);
  /** The tools/list hint while retrieve_tools' description is about to change: not to be kept. */
  const settling = ownHint(0, audience);
  const server = new Server(
    { name: PRODUCT, version: VERSION, title: "mcpproxy" },
    {
      capabilities: {
        tools: {
          listChanged:
            routingMode !== "call-tool" || deps.passthrough !== undefined || deps.searchable !== undefined,
        },
        ...(deps.clients ? FEDERATED_CAPABILITIES : {}),
      },
      instructions: allTools ? ALL_TOOLS_INSTRUCTIONS : INSTRUCTIONS,
      jsonSchemaValidator: sharedSchemaValidator,
      // Only modern answers carry cache fields: a 2025 client would see them as stray keys.
      ...(modern ? { cacheHints: { "tools/list": listHint, "server/discover": listHint } } : {}),
      // Every requestState a client sends back is checked before a handler runs (-32602 if not ours).
      ...(deps.inputRounds ? { requestState: { verify: verifyRequestState(deps.inputRounds.seal) } } : {}),
    },
  );
  const builtins = () => [
    ...builtinToolDefinitions(deps.topK, deps.searchable?.current(deps.catalog)),
    ...(deps.servers ? [upstreamServersDefinition(deps.servers.readOnly)] : []),
    ...(deps.stats ? [toolsStatDefinition] : []),
    toolAlternativesDefinition,
    ...(deps.results ? [readResultDefinition(deps.results.settings.pageChars)] : []),
  ];
  const UpstreamServersArgs = upstreamServersArgs(deps.servers?.readOnly ?? true);
  const RetrieveToolsArgs = retrieveToolsArgs(deps.topK);
  // No session for a modern request: the factory that built this server may be answering a probe,
  // and a per-request server must leave nothing behind.
  const session = modern ? undefined : openSession(deps, routingMode, server);
  const opened = modern ? undefined : deps.clients?.open(server);
  const client = opened && deps.clients ? { session: opened, sessions: deps.clients } : undefined;
  /**
   * The tools this session's last retrieve_tools showed (a call to one counts as "after a search").
   * A modern request is not tied to an earlier search, so its calls never count as after one.
   */
  let searched: ReadonlySet<string> = new Set();
  /**
   * `dynamic` or `auto` asked for a 2026-07-28 client, which has no session: it is told in its
   * first retrieve_tools answer (once per stdio connection; over HTTP each request stands alone).
   */
  let untold =
    modern && !deps.passthrough && (requested === "dynamic" || requested === "auto") ? requested : undefined;
  const resultScope = deps.results ? resultScopes(server, era, deps.results) : undefined;
  const keptOut = keepingOut(deps.results, resultScope, !deps.passthrough);
  /** Whether a tool called by its own name declares an outputSchema (its structuredContent then stays). */
  const hasOutputSchema = (name: string) => {
    const tool = deps.catalog.get(name);
    return !!(tool && deps.catalog.definitionOf(tool)?.outputSchema);
  };
  if (deps.clients) {
    serveFederation(server, client?.session, {
      pool: deps.pool,
      sessions: deps.clients,
      logger: deps.logger,
      serverNames: () => deps.pool.status().map((status) => status.name),
      capabilities: deps.catalog.capabilities,
      era,
      audience,
      inputRounds: deps.inputRounds,
      traces: deps.traces,
      results:
        deps.results && resultScope
          ? (uri, ctx) => readResultResource(deps.results!, resultScope(ctx), uri, era)
          : undefined,
      ...(deps.passthrough
        ? { naming: passthroughNaming(deps.passthrough), ready: connecting(deps.pool, deps.passthrough) }
        : {}),
    });
  }
  if (deps.passthrough) {
    servePassthroughTools(server, deps, deps.passthrough, client, era, (result, ctx, name) =>
      keptOut(result, ctx, () => hasOutputSchema(name)),
    );
    return server;
  }

  if (allTools) serveAllToolsList(server, deps, allTools, builtins);
  else
    server.setRequestHandler("tools/list", async () => ({
      tools: session ? [...builtins(), ...session.listed()] : builtins(),
      // While servers start or a change is under way, the description is about to change: not to be kept.
      ...(modern && deps.searchable && !deps.searchable.isSettled() ? settling : {}),
    }));
  /** Whether a tool may be called by its public name here (dynamic, auto and all routing). */
  const isCalledByName = session !== undefined || allTools !== undefined;

  const callTool = async (
    raw: CallToolRequest,
    ctx: ServerContext,
  ): Promise<CallToolResult | InputRequiredResult> => {
    // The SDK's Server has checked the params against the spec's schema (-32602 if they do not fit).
    const { name, arguments: args, _meta } = raw.params;
    const forwarding = () => callOptionsFor(_meta?.progressToken, ctx, client);
    /** A call of `tool` with its input rounds (a server's questions to the client, either era). */
    const withRounds = (
      call: ForwardOptions,
      tool: string,
      toolArgs: Record<string, unknown> | undefined,
      run: (options: CallOptions) => Promise<CallToolResult | InputRequiredResult>,
    ) => forwardWithRounds(deps, era, ctx, call, tool, toolArgs, run);
    // The proxy's own tools never ask for input: a requestState sent to one was minted for another call.
    if (
      name !== CALL_TOOL &&
      !(isCalledByName && deps.catalog.get(name)) &&
      ctx.mcpReq.requestState() !== undefined
    ) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `requestState was not given for ${name}`);
    }
    if (name === RETRIEVE_TOOLS) {
      const parsed = v.safeParse(RetrieveToolsArgs, args ?? {});
      if (!parsed.success) return errorResult(describeIssues(RETRIEVE_TOOLS, parsed.issues));
      const asked = untold
        ? { ...parsed.output, notes: [...parsed.output.notes, sessionlessNote(untold)] }
        : parsed.output;
      if (untold) deps.sessions?.sessionless(untold);
      untold = undefined;
      const answered = await retrieveToolsCall(deps, asked, session, () =>
        ctx.mcpReq.notify({ method: "notifications/tools/list_changed" }),
      );
      if (!modern && answered.shown) searched = answered.shown;
      return answered.result;
    }
    if (name === UPSTREAM_SERVERS && deps.servers) {
      const parsed = v.safeParse(UpstreamServersArgs, args ?? {});
      if (!parsed.success) return errorResult(describeIssues(UPSTREAM_SERVERS, parsed.issues));
      try {
        const result = await runUpstreamServers(parsed.output, deps.servers.manager, deps.pool, deps.catalog);
        return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
      } catch (error) {
        if (isProxyError(error)) return errorResult([error.message, ...error.details].join("\n"));
        throw error;
      }
    }
    if (name === TOOLS_STAT && deps.stats) {
      const parsed = v.safeParse(ToolsStatArgs, args ?? {});
      if (!parsed.success) return errorResult(describeIssues(TOOLS_STAT, parsed.issues));
      const result = toolsStat(
        parsed.output,
        deps.stats,
        deps.catalog,
        deps.pool,
        client?.session.id,
        callerOf(ctx),
      );
      return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
    }
    if (name === GET_TOOL_ALTERNATIVES) {
      const parsed = v.safeParse(ToolAlternativesArgs, args ?? {});
      if (!parsed.success) return errorResult(describeIssues(GET_TOOL_ALTERNATIVES, parsed.issues));
      return toolAlternatives(deps, parsed.output.name);
    }
    if (name === READ_RESULT && deps.results && resultScope) {
      const parsed = v.safeParse(ReadResultArgs, args ?? {});
      if (!parsed.success) return errorResult(describeIssues(READ_RESULT, parsed.issues));
      return readResult(deps.results, resultScope(ctx), parsed.output);
    }
    if (name === CALL_TOOL) {
      const parsed = v.safeParse(CallToolArgs, args ?? {});
      if (!parsed.success) return errorResult(describeIssues(CALL_TOOL, parsed.issues));
      const call = forwarding();
      const { name: tool, arguments: toolArgs } = parsed.output;
      return call.flushed(
        await keptOut(
          await withRounds(call, tool, toolArgs, (options) =>
            forwardCall(deps, era, session, tool, toolArgs, options, searched),
          ),
          ctx,
          () => false,
        ),
      );
    }
    // Dynamic routing: a registered tool, or any indexed one (a client may call from a list it kept).
    if (isCalledByName && (deps.catalog.get(name) || deps.firstIndexing)) {
      const call = forwarding();
      return call.flushed(
        await keptOut(
          await withRounds(call, name, args, (options) =>
            forwardCall(deps, era, session, name, args, options, searched),
          ),
          ctx,
          () => hasOutputSchema(name),
        ),
      );
    }
    const disabled = deps.catalog.disabled(name);
    if (disabled) return errorResult(disabledMessage(name, disabled.server));
    return errorResult(
      `No tool named ${name}. This proxy offers ${[...BUILTIN_TOOL_NAMES].join(" and ")}: ` +
        `use ${RETRIEVE_TOOLS} to find tools and ${CALL_TOOL} to run them.`,
    );
  };
  server.setRequestHandler("tools/call", traced(deps.traces, "tools/call", callTool));
  return server;
}

/** Connects the server (if it is not) and settles when it is connected or failed. */
const connecting = (pool: UpstreamPool, server: string) => () => pool.connectServer(server);

/** The dynamic-routing state of this session, or undefined in call-tool routing. */
function openSession(deps: ProxyServerDeps, mode: RoutingMode, server: Server): SessionRouting | undefined {
  if (mode === "call-tool" || mode === "all" || !deps.sessions) return undefined;
  const session = deps.sessions.open({
    id: crypto.randomUUID().slice(0, 8),
    mode,
    limit: deps.toolsLimit ?? DEFAULT_TOOLS_LIMIT,
    logger: deps.logger,
    notify: () => server.sendToolListChanged(),
    onChanged: (event) => void deps.plugins?.toolsChanged(event),
  });
  const previous = server.onclose;
  server.onclose = () => {
    session.close();
    previous?.();
  };
  return session;
}
