import type {
  CallToolResult,
  LoggingLevel,
  Progress,
  ServerContext,
  Tool,
} from "@modelcontextprotocol/server";
import { LOG_LEVEL_META_KEY, ProtocolError, Server } from "@modelcontextprotocol/server";
import * as v from "valibot";
import { describeError, isProxyError } from "../errors.ts";
import { approvedTool, type RetrievedTool } from "../index/retrieve-tools.ts";
import type { CatalogTool, ToolCatalog } from "../index/tool-catalog.ts";
import type { Logger } from "../log.ts";
import type { ToolCall, ToolResult } from "../plugin-api.ts";
import type { PluginRunner } from "../plugins/plugin-runner.ts";
import type { SessionRegistry } from "../routing/session-registry.ts";
import type { RoutingMode, SessionRouting } from "../routing/session-routing.ts";
import { redactSecrets } from "../security/redact-secrets.ts";
import type { CallOutcome, CallStats } from "../stats/call-stats.ts";
import { sharedSchemaValidator } from "../upstream/shared-schema-validator.ts";
import type { CallOptions, UpstreamPool } from "../upstream/upstream-pool.ts";
import { PRODUCT, VERSION } from "../version.ts";
import { argumentShape } from "./argument-shape.ts";
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
import { type ClientSession, type ClientSessions, LOG_LEVELS } from "./client-sessions.ts";
import { alternativesFor, withAlternatives } from "./fallback-suggestions.ts";
import { passthroughNaming } from "./federated-names.ts";
import { FEDERATED_CAPABILITIES, serveFederation } from "./federation.ts";
import type { ProxyMetrics } from "./metrics.ts";
import { retrieveRanked } from "./ranked-retrieve.ts";
import { searchWhileConnecting } from "./search-while-connecting.ts";
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
  /** `call-tool` (default), `dynamic` or `auto`; the last two need `sessions`. */
  routing?: RoutingMode;
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
  /** Where calls are counted (stats.db); unset, nothing is recorded. */
  stats?: CallStats | undefined;
  /** The learned prior of each tool (`mcpproxy.learnedPrior`), added to its search score. */
  prior?: ((server: string, tool: string) => number) | undefined;
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
}

export const INSTRUCTIONS =
  "This server is a gateway to many MCP servers. Their tools are not listed directly: call retrieve_tools " +
  "with what you want to do, then call_tool with the name it returns and the arguments its schema asks for.";

export const DEFAULT_TOOLS_LIMIT = 15;

export function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

function firstText(result: CallToolResult): string | undefined {
  const text = result.content?.find((part) => part.type === "text");
  return text && "text" in text ? String(text.text) : undefined;
}

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
 * Which revision a client speaks: `legacy` (2025-11-25 and older: `initialize`, one session per
 * connection) or `modern` (2026-07-28: stateless requests, each carrying its protocol version and
 * capabilities). A modern client has no session, so it gets one fixed, cacheable tools/list
 * (`retrieve_tools`, `call_tool` and the management tools) whatever `--routing` says: the revision
 * forbids a list that varies with earlier requests. Dynamic and auto routing stay for legacy sessions.
 */
export type ClientEra = "legacy" | "modern";

/** How long a modern client may keep the proxy's own tools/list and server/discover answers. */
export const OWN_LIST_TTL_MS = 60_000;

export function createProxyServer(deps: ProxyServerDeps, era: ClientEra = "legacy"): Server {
  const modern = era === "modern";
  const routingMode = modern || deps.passthrough ? "call-tool" : (deps.routing ?? "call-tool");
  const ownHint = { ttlMs: OWN_LIST_TTL_MS, cacheScope: "public" } as const;
  const server = new Server(
    { name: PRODUCT, version: VERSION, title: "mcpproxy" },
    {
      capabilities: {
        tools: { listChanged: routingMode !== "call-tool" || deps.passthrough !== undefined },
        ...(deps.clients ? FEDERATED_CAPABILITIES : {}),
      },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: sharedSchemaValidator,
      // Only modern answers carry cache fields: a 2025 client would see them as stray keys.
      ...(modern ? { cacheHints: { "tools/list": ownHint, "server/discover": ownHint } } : {}),
    },
  );
  const builtins = [
    ...builtinToolDefinitions(deps.topK),
    ...(deps.servers ? [upstreamServersDefinition(deps.servers.readOnly)] : []),
    ...(deps.stats ? [toolsStatDefinition] : []),
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
  if (deps.clients) {
    serveFederation(server, client?.session, {
      pool: deps.pool,
      sessions: deps.clients,
      logger: deps.logger,
      serverNames: () => deps.pool.status().map((status) => status.name),
      capabilities: deps.catalog.capabilities,
      era,
      ...(deps.passthrough
        ? { naming: passthroughNaming(deps.passthrough), ready: connecting(deps.pool, deps.passthrough) }
        : {}),
    });
  }
  if (deps.passthrough) {
    servePassthroughTools(server, deps, deps.passthrough, client);
    return server;
  }

  server.setRequestHandler("tools/list", async () => ({
    tools: session ? [...builtins, ...session.listed()] : builtins,
  }));

  server.setRequestHandler("tools/call", async (raw, ctx): Promise<CallToolResult> => {
    // The SDK's Server has checked the params against the spec's schema (-32602 if they do not fit).
    const { name, arguments: args, _meta } = raw.params;
    const forwarding = () => callOptionsFor(_meta?.progressToken, ctx, client);
    if (name === RETRIEVE_TOOLS) {
      const parsed = v.safeParse(RetrieveToolsArgs, args ?? {});
      if (!parsed.success) return errorResult(describeIssues(RETRIEVE_TOOLS, parsed.issues));
      try {
        // MCPPROXY_TOP_K is the most an agent gets: the operator bounds what a search adds to the context.
        const result = await searchWhileConnecting({
          search: () =>
            retrieveRanked(
              deps.catalog,
              deps.plugins,
              parsed.output.query,
              parsed.output.topK,
              deps.minScore,
              deps.prior,
            ),
          firstIndexing: deps.firstIndexing,
          indexedTools: () => deps.catalog.size(),
          servers: () => deps.pool.status(),
        });
        if (parsed.output.notes.length > 0) result.notes = [...parsed.output.notes, ...(result.notes ?? [])];
        if (!modern) searched = new Set(result.tools.map((hit) => hit.name));
        if (session) {
          const registered = await session.register(
            result.tools.flatMap((hit) => {
              const tool = deps.catalog.get(hit.name);
              return tool
                ? [{ name: hit.name, score: hit.score, hash: tool.hash, definition: registeredToolOf(hit) }]
                : [];
            }),
            () => ctx.mcpReq.notify({ method: "notifications/tools/list_changed" }),
          );
          if (session.state() === "dynamic") result.registered = registered;
        }
        return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
      } catch (error) {
        if (isProxyError(error)) return errorResult(error.message);
        throw error;
      }
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
      const result = toolsStat(parsed.output, deps.stats, deps.catalog, deps.pool, client?.session.id);
      return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
    }
    if (name === CALL_TOOL) {
      const parsed = v.safeParse(CallToolArgs, args ?? {});
      if (!parsed.success) return errorResult(describeIssues(CALL_TOOL, parsed.issues));
      const call = forwarding();
      return call.flushed(
        await forwardCall(deps, session, parsed.output.name, parsed.output.arguments, call, searched),
      );
    }
    // Dynamic routing: a registered tool, or any indexed one (a client may call from a list it kept).
    if (session && (deps.catalog.get(name) || deps.firstIndexing)) {
      const call = forwarding();
      return call.flushed(await forwardCall(deps, session, name, args, call, searched));
    }
    return errorResult(
      `No tool named ${name}. This proxy offers ${[...BUILTIN_TOOL_NAMES].join(" and ")}: ` +
        `use ${RETRIEVE_TOOLS} to find tools and ${CALL_TOOL} to run them.`,
    );
  });
  return server;
}

/** Connects the server (if it is not) and settles when it is connected or failed. */
const connecting = (pool: UpstreamPool, server: string) => () => pool.connectServer(server);

/**
 * The tools of `serve --passthrough SERVER`: the server's approved tools under their own names, in
 * name order, each call forwarded as call_tool would forward it (approvals, argument checks,
 * plugins, stats, relays). A tool held for approval is not listed, and a call to it is refused.
 */
function servePassthroughTools(
  server: Server,
  deps: ProxyServerDeps,
  owner: string,
  client: { session: ClientSession; sessions: ClientSessions } | undefined,
): void {
  const { catalog } = deps;
  const tools = () =>
    catalog
      .names(owner)
      .flatMap((name) => {
        const approved = approvedTool(catalog, name);
        return approved ? [{ ...(approved.definition as Tool), name: approved.tool.tool }] : [];
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  /** The public name (`server__tool`) of one of the server's tools, by its own name. */
  const publicName = (name: string) =>
    catalog.names(owner).find((candidate) => catalog.get(candidate)?.tool === name);

  server.setRequestHandler("tools/list", async () => {
    // On a first run the list is what the first indexing pass finds, not an empty one.
    if (deps.firstIndexing && catalog.names(owner).length === 0) await deps.firstIndexing;
    return { tools: tools() };
  });
  server.setRequestHandler("tools/call", async (raw, ctx): Promise<CallToolResult> => {
    const { name, arguments: args, _meta } = raw.params;
    let target = publicName(name);
    if (!target && deps.firstIndexing) {
      await deps.firstIndexing;
      target = publicName(name);
    }
    if (!target) return errorResult(`No tool named ${name} on ${owner}.`);
    const call = callOptionsFor(_meta?.progressToken, ctx, client);
    return call.flushed(await forwardCall(deps, undefined, target, args, call, new Set()));
  });
}

/**
 * What a forwarded call carries from the client's request: its cancellation, where the upstream's
 * progress goes (to the client, under the client's own token, when it asked for it), and a 2026
 * request's log level (its `_meta` logLevel: the server's log messages at or above it come back
 * on the request's own stream; without one, none do).
 * `flushed` holds the result back until every progress notice is sent: a notice that arrives after
 * its result is dropped by the client.
 */
function callOptionsFor(
  progressToken: string | number | undefined,
  extra: ServerContext,
  clients: { session: ClientSession; sessions: ClientSessions } | undefined,
): CallOptions & { flushed(result: CallToolResult): Promise<CallToolResult> } {
  const sending: Promise<unknown>[] = [];
  // Named to the pool, so what the upstream asks the client while it serves this call comes here.
  const caller = clients?.sessions.beginCall(clients.session, extra);
  const level = requestLogLevel(extra);
  return {
    signal: extra.mcpReq.signal,
    ...(caller && clients ? { caller, session: clients.session.id } : {}),
    ...(level
      ? {
          log: {
            level,
            send: (notification) => {
              const sent = extra.mcpReq.notify(notification).catch(() => undefined);
              sending.push(sent);
              return sent;
            },
          },
        }
      : {}),
    ...(progressToken !== undefined
      ? {
          onprogress: (progress: Progress) =>
            void sending.push(
              extra.mcpReq
                .notify({
                  method: "notifications/progress",
                  params: { ...progress, progressToken },
                })
                .catch(() => undefined),
            ),
        }
      : {}),
    async flushed(result) {
      if (caller) clients?.sessions.endCall(caller);
      await Promise.all(sending);
      return result;
    },
  };
}

/** The log level a 2026-07-28 request named in its `_meta` (a 2025 session's is its setLevel). */
function requestLogLevel(extra: ServerContext): LoggingLevel | undefined {
  const level = (extra.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY];
  return LOG_LEVELS.includes(level as LoggingLevel) ? (level as LoggingLevel) : undefined;
}

/** The dynamic-routing state of this session, or undefined in call-tool routing. */
function openSession(deps: ProxyServerDeps, mode: RoutingMode, server: Server): SessionRouting | undefined {
  if (mode === "call-tool" || !deps.sessions) return undefined;
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

/** What became of a call, for the stats and the suggestions (set by `forwardOnce`). */
interface CallReport {
  target?: CatalogTool;
  /** The call reached the pool (not refused by a plugin, the arguments check or the quarantine). */
  forwarded?: boolean;
  outcome?: CallOutcome;
  error?: string;
}

/**
 * A tool call, counted (`deps.stats`) when it reached its server, and when it failed there, given up
 * to three other tools that may do the same (fallback-suggestions.ts), so the agent can go on
 * without another search.
 */
async function forwardCall(
  deps: ProxyServerDeps,
  session: SessionRouting | undefined,
  name: string,
  args: Record<string, unknown> | undefined,
  context: CallOptions,
  searched: ReadonlySet<string>,
): Promise<CallToolResult> {
  const started = performance.now();
  const report: CallReport = {};
  const result = await forwardOnce(deps, session, name, args, context, report);
  const { target, outcome } = report;
  if (!report.forwarded || !target || !outcome) return result;
  const ms = performance.now() - started;
  deps.stats?.record({
    server: target.server,
    tool: target.tool,
    ms,
    outcome,
    error: report.error,
    afterSearch: searched.has(name),
    session: context.session,
  });
  deps.metrics?.observeCall(target.server, target.tool, ms, outcome);
  // In passthrough the client knows no other tool to suggest.
  if (outcome === "ok" || context.signal?.aborted || deps.passthrough) return result;
  const alternatives = await alternativesFor(deps, target).catch(() => []);
  return withAlternatives(result, alternatives);
}

async function forwardOnce(
  deps: ProxyServerDeps,
  session: SessionRouting | undefined,
  name: string,
  args: Record<string, unknown> | undefined,
  context: CallOptions,
  report: CallReport,
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
  if (deps.catalog.isQuarantined(target)) {
    return errorResult(
      `${name} is quarantined: it is new on its server or changed since it was approved, and is not run until ` +
        `someone reviews it. Ask the user to run \`mcpproxy approve ${target.server}/${target.tool}\`.`,
    );
  }
  session?.touch(name);
  report.target = target;
  const started = performance.now();
  let outcome = "error";
  try {
    const given = args ?? {};
    let call: ToolCall = {
      server: target.server,
      tool: target.tool,
      name,
      arguments: given,
      annotations: {},
    };
    if (deps.plugins?.has("beforeToolCall")) {
      // Read only for policy hooks: the definition is on disk, and the call path stays lean without them.
      const annotations = deps.catalog.definitionOf(target)?.annotations;
      if (annotations && typeof annotations === "object")
        call = { ...call, annotations: annotations as Record<string, unknown> };
      const decision = await deps.plugins.beforeToolCall(call);
      if ("reject" in decision) {
        outcome = `refused by plugin ${decision.plugin}`;
        return errorResult(decision.reject);
      }
      call = decision.call;
    }
    const problems = deps.arguments?.problems(target, call.arguments);
    if (problems) {
      outcome = "invalid arguments";
      return errorResult(
        `Invalid arguments for ${name}: ${problems}. Call it again with arguments that fit its input schema ` +
          `(${RETRIEVE_TOOLS} shows the schema).`,
      );
    }
    // No arguments stay no arguments on the wire, unless a plugin supplied some.
    const sent =
      args === undefined && call.arguments === given
        ? undefined
        : (call.arguments as Record<string, unknown>);
    report.forwarded = true;
    let result = await deps.pool.callTool(target.server, target.tool, sent, context);
    if (deps.plugins?.has("transformToolResult")) {
      // Plugins see the result as the plugin API types it (its structuredContent an object).
      result = (await deps.plugins.transformToolResult({
        ...call,
        result: result as ToolResult,
      })) as CallToolResult;
    }
    report.outcome = result.isError ? "isError" : "ok";
    outcome = report.outcome;
    if (result.isError) report.error = firstText(result);
    return result;
  } catch (error) {
    report.outcome = isProxyError(error) && error.code === "UPSTREAM_TIMEOUT" ? "timeout" : "error";
    let failed: CallToolResult;
    if (error instanceof ProtocolError) {
      // The SDK prefixes "MCP error CODE: " to a message that may carry the same prefix already.
      const message = redactSecrets(error.message.replace(/^(MCP error -?\d+: )+/, ""));
      failed = errorResult(
        `Server ${target.server} rejected ${target.tool} (JSON-RPC error ${error.code}): ${message}`,
      );
    } else if (isProxyError(error)) {
      failed = errorResult(error.message);
    } else {
      deps.logger.error(`call to ${name} failed`, { error: describeError(error) });
      failed = errorResult(`Calling ${name} failed: ${redactSecrets(describeError(error))}`);
    }
    report.error = firstText(failed);
    return failed;
  } finally {
    if (deps.logger.enabled("debug")) {
      deps.logger.debug("call", {
        server: target.server,
        tool: target.tool,
        ms: Math.round((performance.now() - started) * 100) / 100,
        outcome,
        arguments: argumentShape(args ?? {}),
      });
    }
  }
}
