import type {
  CallToolResult,
  ClientCapabilities,
  InputRequiredResult,
  ServerContext,
} from "@modelcontextprotocol/server";
import {
  isInputRequiredResult,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
} from "@modelcontextprotocol/server";
import { describeError, isProxyError } from "../../errors.ts";
import type { CatalogTool } from "../../index/catalog-types.ts";
import { LIMIT_META_KEY, limitMeta, limitRefusalOf } from "../../limits/call-gate.ts";
import type { ToolCall, ToolResult } from "../../plugin-api.ts";
import type { SessionRouting } from "../../routing/session-routing.ts";
import { redactSecrets } from "../../security/redact-secrets.ts";
import type { CallOutcome } from "../../stats/call-record.ts";
import type { CallOptions } from "../../upstream/forward-call.ts";
import { PAUSED_MESSAGE } from "../../upstream/upstream-pool.ts";
import type { ClientEra } from "../client-era.ts";
import { forwardTraced } from "../observe/request-spans.ts";
import type { ProxyServerDeps } from "../proxy-deps.ts";
import { RETRIEVE_TOOLS } from "../tools/builtin-tools.ts";
import { argumentShape } from "./argument-shape.ts";
import type { ForwardOptions } from "./call-options.ts";
import { retryOnFallback } from "./fallback-retry.ts";
import { alternativesFor, withAlternatives } from "./fallback-suggestions.ts";
import { withInputRounds } from "./input-rounds.ts";

/**
 * One tool call from a client to its upstream, as call_tool, a dynamically registered tool and
 * `--passthrough` all make it: looked up, held while quarantined, past the plugins' policy hooks and
 * the argument check, forwarded with its input rounds, counted, and, when it fails, turned into an
 * `isError` result the agent can act on (a 2026 client's missing capability excepted: -32021).
 */

export function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

function firstText(result: CallToolResult): string | undefined {
  const text = result.content?.find((part) => part.type === "text");
  return text && "text" in text ? String(text.text) : undefined;
}

/**
 * A forwarded call with its input rounds (input-rounds.ts), bound to the tool's server and name and
 * to the client's arguments. Without them (no data dir), as it is.
 */
export async function forwardWithRounds(
  deps: ProxyServerDeps,
  era: ClientEra,
  ctx: ServerContext,
  call: ForwardOptions,
  name: string,
  args: Record<string, unknown> | undefined,
  run: (options: CallOptions) => Promise<CallToolResult | InputRequiredResult>,
): Promise<CallToolResult | InputRequiredResult> {
  let found = deps.catalog.get(name);
  if (!found && deps.firstIndexing) {
    await deps.firstIndexing;
    found = deps.catalog.get(name);
  }
  // No such tool: the call fails before it reaches a server (forwardOnce says why).
  if (!deps.calls?.inputRounds || !found) return run(call);
  return withInputRounds(
    deps.calls?.inputRounds,
    era,
    ctx,
    { method: "tools/call", server: found.server, target: found.tool, args: args ?? {} },
    (hooks) => run({ ...call, ...hooks }),
    call.onprogress,
  );
}

/** What became of a call, for the stats and the suggestions (set by `forwardOnce`). */
export interface CallReport {
  target?: CatalogTool;
  /** The call reached the pool (not refused by a plugin, the arguments check or the quarantine). */
  forwarded?: boolean;
  outcome?: CallOutcome;
  error?: string;
  /** What the server said the client must declare for this call (its -32021). */
  missingCapabilities?: ClientCapabilities;
}

/**
 * A tool call, counted (`deps.observe?.stats`) when it reached its server, and when it failed there, given up
 * to three other tools that may do the same (fallback-suggestions.ts), so the agent can go on
 * without another search.
 */
export async function forwardCall(
  deps: ProxyServerDeps,
  era: ClientEra,
  session: SessionRouting | undefined,
  name: string,
  args: Record<string, unknown> | undefined,
  context: CallOptions,
  searched: ReadonlySet<string>,
  /** A fallback's call (fallback-retry.ts): its failure is told with the call it stood in for. */
  isFallback = false,
): Promise<CallToolResult | InputRequiredResult> {
  const started = performance.now();
  const report: CallReport = {};
  const result = await forwardOnce(deps, session, name, args, context, report);
  return settleCall(
    deps,
    era,
    session,
    { name, args, context, searched, isFallback, started },
    report,
    result,
  );
}

/** A call as `forwardCall` made it, for `settleCall`. */
export interface SettledCall {
  name: string;
  args: Record<string, unknown> | undefined;
  context: CallOptions;
  searched: ReadonlySet<string>;
  isFallback: boolean;
  /** performance.now() when the call began. */
  started: number;
}

/**
 * The end of a forwarded call (its `report` and result): counted when it reached its server, a 2026
 * client's missing capability thrown as -32021, and a failure given its alternatives or retried on
 * a fallback. Also the end of a call made by the plain lane (plain-lane.ts).
 */
export async function settleCall(
  deps: ProxyServerDeps,
  era: ClientEra,
  session: SessionRouting | undefined,
  call: SettledCall,
  report: CallReport,
  result: CallToolResult | InputRequiredResult,
): Promise<CallToolResult | InputRequiredResult> {
  const { name, args, context, searched, isFallback, started } = call;
  const { target, outcome } = report;
  // A round that asks the client for input is not the call's end: the last round is counted.
  if (!report.forwarded || !target || !outcome || isInputRequiredResult(result)) return result;
  const ms = performance.now() - started;
  deps.observe?.stats?.record({
    server: target.server,
    tool: target.tool,
    ms,
    outcome,
    error: report.error,
    afterSearch: searched.has(name),
    session: context.session,
    principal: context.principal?.key,
  });
  deps.observe?.metrics?.observeCall(target.server, target.tool, ms, outcome);
  // A 2026 client is told in the protocol's own terms that it lacks a capability the call needs
  // (-32021, HTTP 400); a 2025 client, which has no such error, gets the isError result.
  if (report.missingCapabilities && era === "modern") {
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: report.missingCapabilities },
      `${target.tool} on ${target.server} needs ${Object.keys(report.missingCapabilities).join(" and ")}, which this request's clientCapabilities do not declare`,
    );
  }
  // In passthrough the client knows no other tool to suggest.
  if (outcome === "ok" || context.signal?.aborted || deps.routing?.passthrough || isFallback) return result;
  const alternatives = await alternativesFor(deps, target).catch(() => []);
  const failed = { target, args, result, alternatives, context, error: report.error };
  const retried = await retryOnFallback(deps, failed, (to, options) =>
    forwardCall(deps, era, session, to, args, options, searched, true),
  );
  return retried ?? withAlternatives(result, alternatives);
}

/** A call to a tool a person hid (`disabledTools`, `tools.<name>.enabled: false`). */
export function disabledMessage(name: string, server: string): string {
  return (
    `${name} is disabled: a person turned it off in the config of ${server} (disabledTools or tools.<name>.enabled), ` +
    "so mcpproxy does not run it. Do not retry; ask the user if the task needs it."
  );
}

async function forwardOnce(
  deps: ProxyServerDeps,
  session: SessionRouting | undefined,
  name: string,
  args: Record<string, unknown> | undefined,
  context: CallOptions,
  report: CallReport,
): Promise<CallToolResult | InputRequiredResult> {
  let target = deps.catalog.get(name);
  if (!target && deps.firstIndexing) {
    await deps.firstIndexing;
    target = deps.catalog.get(name);
  }
  if (!target) {
    const disabled = deps.catalog.disabled(name);
    if (disabled) return errorResult(disabledMessage(name, disabled.server));
    return errorResult(
      `No tool named ${name}. Use ${RETRIEVE_TOOLS} to find tools and pass the name it returns.`,
    );
  }
  if (deps.pool.isPaused()) return errorResult(PAUSED_MESSAGE);
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
    const checked = deps.calls?.arguments?.check(target, call.arguments);
    if (checked?.problems !== undefined) {
      outcome = "invalid arguments";
      return errorResult(
        `Invalid arguments for ${name}: ${checked.problems}. Call it again with arguments that fit its input schema ` +
          `(${RETRIEVE_TOOLS} shows the schema).`,
      );
    } else if (checked && checked.args !== call.arguments) call = { ...call, arguments: checked.args };
    // No arguments stay no arguments on the wire, unless a plugin supplied some.
    const sent =
      args === undefined && call.arguments === given
        ? undefined
        : (call.arguments as Record<string, unknown>);
    report.forwarded = true;
    if (context.principal) await deps.calls?.quotas?.take(context.principal, target.server);
    const answer = await forwardTraced(
      deps.observe?.traces,
      context,
      { method: "tools/call", server: target.server, target: target.tool, name },
      (options) => deps.pool.callTool(target.server, target.tool, sent, options),
    );
    if (isInputRequiredResult(answer)) {
      outcome = "input required";
      return answer;
    }
    let result = answer;
    if (deps.plugins?.has("transformToolResult")) {
      // Plugins see the result as the plugin API types it (its structuredContent an object).
      result = (await deps.plugins.transformToolResult({
        ...call,
        result: result as ToolResult,
      })) as CallToolResult;
    }
    outcome = callAnswered(report, result);
    return result;
  } catch (error) {
    return callFailure(deps, target, name, error, context, report);
  } finally {
    logCall(deps, target, started, outcome, args, context);
  }
}

/** The debug log's line of a call: where it went, how long it took and how it ended, its arguments' shape only. */
export function logCall(
  deps: ProxyServerDeps,
  target: CatalogTool,
  started: number,
  outcome: string,
  args: Record<string, unknown> | undefined,
  context: CallOptions,
): void {
  if (!deps.logger.enabled("debug")) return;
  deps.logger.debug("call", {
    server: target.server,
    tool: target.tool,
    ms: Math.round((performance.now() - started) * 100) / 100,
    outcome,
    arguments: argumentShape(args ?? {}),
    ...(context.principal ? { principal: context.principal.subject } : {}),
  });
}

/** A result its server gave: its outcome, and its text when it is an error, for the statistics. */
export function callAnswered(report: CallReport, result: CallToolResult): CallOutcome {
  const outcome: CallOutcome = result.isError ? "isError" : "ok";
  report.outcome = outcome;
  if (result.isError) report.error = firstText(result);
  return outcome;
}

/**
 * A call that failed on its way or at its server, as the `isError` result the agent gets; `report`
 * is told its outcome (and the capabilities a server said the client lacks).
 */
export function callFailure(
  deps: ProxyServerDeps,
  target: CatalogTool,
  name: string,
  error: unknown,
  context: CallOptions,
  report: CallReport,
): CallToolResult {
  report.outcome = isProxyError(error) && error.code === "UPSTREAM_TIMEOUT" ? "timeout" : "error";
  let failed: CallToolResult;
  const refusal = limitRefusalOf(error);
  if (refusal) {
    // The server's call limits refused it (src/limits/): said in words, and in _meta for programs.
    report.outcome = "limited";
    failed = {
      ...errorResult((error as Error).message),
      _meta: { [LIMIT_META_KEY]: limitMeta(refusal) },
    };
  } else if (error instanceof ProtocolError) {
    const missing =
      error.code === ProtocolErrorCode.MissingRequiredClientCapability
        ? requiredCapabilitiesOf(error.data)
        : undefined;
    if (missing) report.missingCapabilities = missing;
    // The SDK prefixes "MCP error CODE: " to a message that may carry the same prefix already.
    const message = redactSecrets(error.message.replace(/^(MCP error -?\d+: )+/, ""));
    failed = errorResult(
      `Server ${target.server} rejected ${target.tool} (JSON-RPC error ${error.code}): ${message}`,
    );
  } else if (isProxyError(error)) {
    failed = errorResult(error.message);
  } else {
    deps.logger.error(`call to ${name} failed`, {
      error: describeError(error),
      ...(context.principal ? { principal: context.principal.subject } : {}),
    });
    failed = errorResult(`Calling ${name} failed: ${redactSecrets(describeError(error))}`);
  }
  report.error = firstText(failed);
  return failed;
}

/**
 * The capabilities a server's -32021 names (`data.requiredCapabilities`, a ClientCapabilities
 * object), or undefined when its answer has no usable object (the client then gets the isError
 * result, which carries the server's words).
 */
function requiredCapabilitiesOf(data: unknown): ClientCapabilities | undefined {
  const required = (data as { requiredCapabilities?: unknown } | undefined)?.requiredCapabilities;
  return required &&
    typeof required === "object" &&
    !Array.isArray(required) &&
    Object.keys(required).length > 0
    ? (required as ClientCapabilities)
    : undefined;
}
