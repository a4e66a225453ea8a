import type {
  CallToolRequest,
  CallToolResult,
  InputRequiredResult,
  ServerContext,
  Tool,
} from "@modelcontextprotocol/server";
import { ProtocolError, ProtocolErrorCode, Server } from "@modelcontextprotocol/server";
import * as v from "valibot";
import { isProxyError } from "../errors.ts";
import { type RoutingMode, type SessionRouting, sessionlessNote } from "../routing/session-routing.ts";
import type { CallOptions } from "../upstream/forward-call.ts";
import { sharedSchemaValidator } from "../upstream/shared-schema-validator.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
import { PRODUCT, VERSION } from "../version.ts";
import { type Audience, ownHint } from "./cache-hints.ts";
import { callOptionsFor, type ForwardOptions } from "./calls/call-options.ts";
import { disabledMessage, errorResult, forwardCall, forwardWithRounds } from "./calls/forwarded-call.ts";
import { verifyRequestState } from "./calls/input-rounds.ts";
import { attachPlainLane, createPlainLane } from "./calls/plain-lane.ts";
import { servePlainToolCalls } from "./calls/plain-tool-calls.ts";
import { checkEnvelopesOnce } from "./checked-envelopes.ts";
import type { ClientEra } from "./client-era.ts";
import { passthroughNaming } from "./federation/federated-names.ts";
import { FEDERATED_CAPABILITIES, serveFederation } from "./federation/federation.ts";
import { traced } from "./observe/request-spans.ts";
import { dispatchPlainRequests } from "./plain-dispatch.ts";
import type { ProxyServerDeps } from "./proxy-deps.ts";
import { serveAllToolsList } from "./tools/all-tools-list.ts";
import {
  BUILTIN_TOOL_NAMES,
  builtinToolDefinitions,
  CALL_TOOL,
  CallToolArgs,
  describeIssues,
  plainCallToolArgs,
  RETRIEVE_TOOLS,
  retrieveToolsArgs,
} from "./tools/builtin-tools.ts";
import { servePassthroughTools } from "./tools/passthrough-tools.ts";
import {
  keepingOut,
  READ_RESULT,
  ReadResultArgs,
  readResult,
  readResultDefinition,
  readResultResource,
  resultScopes,
} from "./tools/read-result-tool.ts";
import { DEFAULT_TOOLS_LIMIT, retrieveToolsCall } from "./tools/retrieve-tools-call.ts";
import {
  GET_TOOL_ALTERNATIVES,
  ToolAlternativesArgs,
  toolAlternatives,
  toolAlternativesDefinition,
} from "./tools/tool-alternatives-tool.ts";
import { TOOLS_STAT, ToolsStatArgs, toolsStat, toolsStatDefinition } from "./tools/tools-stat-tool.ts";
import {
  runUpstreamServers,
  UPSTREAM_SERVERS,
  upstreamServersArgs,
  upstreamServersDefinition,
} from "./tools/upstream-servers-tool.ts";
import { callerOf } from "./transport/resource-guard.ts";

const INSTRUCTIONS =
  "This server is a gateway to many MCP servers. Their tools are not listed directly: call retrieve_tools " +
  "with what you want to do, then call_tool with the name it returns and the arguments its schema asks for.";

/** `--routing all`: the tools are listed, and the search is one way among two to find them. */
const ALL_TOOLS_INSTRUCTIONS =
  "This server is a gateway to many MCP servers. Every approved tool of theirs is listed under the name " +
  "server__tool: call it directly. retrieve_tools searches them by what you want to do, and call_tool runs one by name.";

/**
 * How long a modern client may keep the proxy's own tools/list and server/discover answers. The
 * list changes when servers come and go; a listening client is told at once, any other sees the
 * change within this long (and gets `ttlMs: 0` while servers start or a change is under way).
 */
const OWN_LIST_TTL_MS = 60_000;

/**
 * The MCP server the agent talks to. Transport-agnostic: stdio and HTTP each create one per
 * session. Every failure a tool call can meet becomes an `isError` result the agent can read and
 * act on; only protocol misuse becomes a JSON-RPC error. Plugins run at two seams only: around a
 * forwarded call, and over the hits of a search.
 *
 * `audience`: who the endpoint serving this server answers (cache-hints.ts). A modern answer is
 * `public` only when every caller of that endpoint gets the same one.
 */
/** A passthrough session's calls follow no search (its statistics' afterSearch). */
const NOTHING_SEARCHED: ReadonlySet<string> = new Set();

export function createProxyServer(deps: ProxyServerDeps, era: ClientEra, audience: Audience): Server {
  const { search, routing = {}, calls = {}, observe = {} } = deps;
  const { passthrough } = routing;
  const modern = era === "modern";
  const requested = routing.mode === "all" && !routing.allTools ? "call-tool" : (routing.mode ?? "call-tool");
  const routingMode = passthrough || (modern && requested !== "all") ? "call-tool" : requested;
  const allTools = routingMode === "all" ? routing.allTools : undefined;
  const listHint = ownHint(OWN_LIST_TTL_MS, audience);
  /** The tools/list hint while retrieve_tools' description is about to change: not to be kept. */
  const settling = ownHint(0, audience);
  const server = new Server(
    { name: PRODUCT, version: VERSION, title: "mcpproxy" },
    {
      capabilities: {
        tools: {
          listChanged:
            routingMode !== "call-tool" || passthrough !== undefined || search.searchable !== undefined,
        },
        ...(deps.clients ? FEDERATED_CAPABILITIES : {}),
      },
      instructions: allTools ? ALL_TOOLS_INSTRUCTIONS : INSTRUCTIONS,
      jsonSchemaValidator: sharedSchemaValidator,
      // Only modern answers carry cache fields: a 2025 client would see them as stray keys.
      ...(modern ? { cacheHints: { "tools/list": listHint, "server/discover": listHint } } : {}),
      // Every requestState a client sends back is checked before a handler runs (-32602 if not ours).
      ...(calls.inputRounds ? { requestState: { verify: verifyRequestState(calls.inputRounds.seal) } } : {}),
    },
  );
  dispatchPlainRequests(server);
  checkEnvelopesOnce(server);
  const builtins = () => [
    ...builtinToolDefinitions(search.topK, search.searchable?.current(deps.catalog)),
    ...(deps.servers ? [upstreamServersDefinition(deps.servers.readOnly)] : []),
    ...(observe.stats ? [toolsStatDefinition] : []),
    toolAlternativesDefinition,
    ...(calls.results ? [readResultDefinition(calls.results.settings.pageChars)] : []),
  ];
  const UpstreamServersArgs = upstreamServersArgs(deps.servers?.readOnly ?? true);
  const RetrieveToolsArgs = retrieveToolsArgs(search.topK);
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
    modern && !passthrough && (requested === "dynamic" || requested === "auto") ? requested : undefined;
  const resultScope = calls.results ? resultScopes(server, era, calls.results) : undefined;
  const keptOut = keepingOut(calls.results, resultScope, !passthrough);
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
      inputRounds: calls.inputRounds,
      traces: observe.traces,
      results:
        calls.results && resultScope
          ? (uri, ctx) => readResultResource(calls.results!, resultScope(ctx), uri, era)
          : undefined,
      ...(passthrough
        ? {
            naming: passthroughNaming(passthrough),
            ready: connecting(deps.pool, passthrough),
          }
        : {}),
    });
  }
  if (passthrough) {
    const served = servePassthroughTools(server, deps, passthrough, client, era, (result, ctx, name) =>
      keptOut(result, ctx, () => hasOutputSchema(name)),
    );
    attachPlainLane(
      server,
      createPlainLane({
        deps,
        era,
        session: undefined,
        client,
        isCalledByName: false,
        passthroughName: served.publicName,
        searched: () => NOTHING_SEARCHED,
        keptOut,
        hasOutputSchema,
      }),
    );
    return server;
  }

  if (allTools) serveAllToolsList(server, deps, allTools, builtins);
  else
    server.setRequestHandler("tools/list", async () => ({
      // Registered definitions are as their servers listed them, checked then as MCP Tools.
      tools: session ? [...builtins(), ...(session.listed() as Tool[])] : builtins(),
      // While servers start or a change is under way, the description is about to change: not to be kept.
      ...(modern && search.searchable && !search.searchable.isSettled() ? settling : {}),
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
      if (untold) routing.sessions?.sessionless(untold);
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
    if (name === TOOLS_STAT && observe.stats) {
      const parsed = v.safeParse(ToolsStatArgs, args ?? {});
      if (!parsed.success) return errorResult(describeIssues(TOOLS_STAT, parsed.issues));
      const result = toolsStat(
        parsed.output,
        observe.stats,
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
    if (name === READ_RESULT && calls.results && resultScope) {
      const parsed = v.safeParse(ReadResultArgs, args ?? {});
      if (!parsed.success) return errorResult(describeIssues(READ_RESULT, parsed.issues));
      return readResult(calls.results, resultScope(ctx), parsed.output);
    }
    if (name === CALL_TOOL) {
      let asked = plainCallToolArgs(args);
      if (!asked) {
        const parsed = v.safeParse(CallToolArgs, args ?? {});
        if (!parsed.success) return errorResult(describeIssues(CALL_TOOL, parsed.issues));
        asked = parsed.output;
      }
      const call = forwarding();
      const { name: tool, arguments: toolArgs } = asked;
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
  servePlainToolCalls(server, traced(observe.traces, "tools/call", callTool));
  attachPlainLane(
    server,
    createPlainLane({
      deps,
      era,
      session,
      client,
      isCalledByName,
      searched: () => searched,
      keptOut,
      hasOutputSchema,
    }),
  );
  return server;
}

/** Connects the server (if it is not) and settles when it is connected or failed. */
const connecting = (pool: UpstreamPool, server: string) => () => pool.connectServer(server);

/** The dynamic-routing state of this session, or undefined in call-tool routing. */
function openSession(deps: ProxyServerDeps, mode: RoutingMode, server: Server): SessionRouting | undefined {
  const sessions = deps.routing?.sessions;
  if (mode === "call-tool" || mode === "all" || !sessions) return undefined;
  const session = sessions.open({
    id: crypto.randomUUID().slice(0, 8),
    mode,
    limit: deps.routing?.toolsLimit ?? DEFAULT_TOOLS_LIMIT,
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
