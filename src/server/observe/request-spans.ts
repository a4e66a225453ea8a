import type {
  HandlerResultTypeMap,
  RequestTypeMap,
  Result,
  ServerContext,
} from "@modelcontextprotocol/server";
import {
  isInputRequiredResult,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
} from "@modelcontextprotocol/server";
import { isProxyError } from "../../errors.ts";
import { limitRefusalOf } from "../../limits/call-gate.ts";
import { remoteParent, type TraceCarrier, traceHeaders } from "../../tracing/trace-context.ts";
import {
  type AttributeValue,
  OUTCOME,
  type Span,
  type SpanOutcome,
  type Tracer,
} from "../../tracing/tracer.ts";
import type { CallOptions, InputMethod } from "../../upstream/forward-call.ts";
import { callerOf } from "../transport/resource-guard.ts";

/**
 * The spans of what clients ask (src/tracing/), at the two seams every forwarded request passes:
 * the request handler (a server span, the client's trace context its parent) and the request to
 * the upstream (a client span under it, whose context goes upstream with the call). Attributes
 * follow the OpenTelemetry semantic conventions for MCP (`mcp.method.name`, `gen_ai.tool.name`,
 * `gen_ai.prompt.name`, `gen_ai.operation.name`, `jsonrpc.request.id`, `network.transport`,
 * `error.type`, `rpc.response.status_code`, and `enduser.id`, the subject of the caller's access token
 * when the HTTP listener takes them); the proxy's own are under `mcpproxy.`. Names and
 * outcomes only: never arguments, results, resource URIs or error texts.
 */
export type TracedMethod = "tools/call" | "prompts/get" | "resources/read";

/** The server, the public tool name, and how long the call waited for its turn (ms). */
const SERVER = "mcpproxy.server";
const TOOL = "mcpproxy.tool";
const QUEUE_WAIT = "mcpproxy.queue.wait_ms";

const spans = new WeakMap<ServerContext, Span>();

/** The span of the client request `ctx` serves, while traces are on. */
export function spanOf(ctx: ServerContext): Span | undefined {
  return spans.get(ctx);
}

/** What the method names: the tool or prompt (low-cardinality), never a resource URI. */
function targetOf(method: TracedMethod, params: unknown): string | undefined {
  const name = (params as { name?: unknown } | undefined)?.name;
  return method !== "resources/read" && typeof name === "string" ? name : undefined;
}

function methodAttributes(method: TracedMethod, target: string | undefined): Record<string, AttributeValue> {
  return {
    "mcp.method.name": method,
    ...(target !== undefined && method === "tools/call"
      ? { "gen_ai.tool.name": target, "gen_ai.operation.name": "execute_tool" }
      : {}),
    ...(target !== undefined && method === "prompts/get" ? { "gen_ai.prompt.name": target } : {}),
  };
}

/** The client's trace context over HTTP: the request's headers (one message's `_meta` wins over them). */
function headerCarrier(request: Request | undefined): TraceCarrier | undefined {
  if (!request) return undefined;
  return {
    traceparent: request.headers.get("traceparent") ?? undefined,
    tracestate: request.headers.get("tracestate") ?? undefined,
  };
}

/**
 * `handler` with a server span around each request while traces are on (as it is otherwise). The
 * span's outcome is the forwarded call's when one set it (a timeout answers isError, and is told
 * as a timeout), else read from the result or the error.
 */
export function traced<M extends TracedMethod>(
  tracer: Tracer | undefined,
  method: M,
  handler: (request: RequestTypeMap[M], ctx: ServerContext) => Promise<HandlerResultTypeMap[M]>,
): (request: RequestTypeMap[M], ctx: ServerContext) => Promise<HandlerResultTypeMap[M]> {
  if (!tracer) return handler;
  return async (request, ctx) => {
    const target = targetOf(method, request.params);
    const caller = callerOf(ctx);
    const version = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_META_KEY];
    const span = tracer.startSpan(target !== undefined ? `${method} ${target}` : method, {
      kind: "server",
      parent: remoteParent([ctx.mcpReq._meta as TraceCarrier | undefined, headerCarrier(ctx.http?.req)]),
      attributes: {
        ...methodAttributes(method, target),
        "jsonrpc.request.id": String(ctx.mcpReq.id),
        "network.transport": ctx.http ? "tcp" : "pipe",
        ...(typeof version === "string" ? { "mcp.protocol.version": version } : {}),
        ...(caller ? { "enduser.id": caller.subject } : {}),
      },
    });
    spans.set(ctx, span);
    try {
      const result = await handler(request, ctx);
      if (!span.has(OUTCOME)) span.set(OUTCOME, outcomeOf(result));
      return result;
    } catch (error) {
      if (!span.has(OUTCOME)) settle([span], failureOf(error));
      throw error;
    } finally {
      span.end();
    }
  };
}

/** One request forwarded upstream (`send`), with a client span under the request's while traces are on. */
export function forwardTraced<R extends Result>(
  tracer: Tracer | undefined,
  options: CallOptions,
  call: { method: InputMethod; server: string; target?: string | undefined; name?: string | undefined },
  send: (options: CallOptions) => Promise<R>,
): Promise<R> {
  // Traces off: the call as it is, not one more promise around it.
  return tracer ? forwardSpanned(tracer, options, call, send) : send(options);
}

async function forwardSpanned<R extends Result>(
  tracer: Tracer,
  options: CallOptions,
  call: { method: InputMethod; server: string; target?: string | undefined; name?: string | undefined },
  send: (options: CallOptions) => Promise<R>,
): Promise<R> {
  const parent = options.span;
  const named = { [SERVER]: call.server, ...(call.name !== undefined ? { [TOOL]: call.name } : {}) };
  for (const [key, value] of Object.entries(named)) parent?.set(key, value);
  const span = tracer.startSpan(call.target !== undefined ? `${call.method} ${call.target}` : call.method, {
    kind: "client",
    parent: parent?.context,
    attributes: { ...methodAttributes(call.method, call.target), ...named },
  });
  const both = parent ? [span, parent] : [span];
  try {
    const result = await send({
      ...options,
      traceContext: traceHeaders(span.context),
      onAdmitted: (waitedMs) => {
        for (const each of both) each.set(QUEUE_WAIT, waitedMs);
      },
    });
    for (const each of both) each.set(OUTCOME, outcomeOf(result));
    return result;
  } catch (error) {
    settle(both, failureOf(error));
    throw error;
  } finally {
    span.end();
  }
}

function outcomeOf(result: unknown): SpanOutcome {
  if (isInputRequiredResult(result)) return "input_required";
  return (result as { isError?: unknown } | undefined)?.isError === true ? "isError" : "ok";
}

interface Failure {
  outcome: SpanOutcome;
  errorType: string;
  /** The JSON-RPC error code the server (or the SDK) answered. */
  code?: number | undefined;
}

/** What a thrown error was: refused by the call limits, over time, or a failure (its JSON-RPC code). */
function failureOf(error: unknown): Failure {
  if (limitRefusalOf(error)) return { outcome: "limited", errorType: "limited" };
  if (isProxyError(error) && error.code === "UPSTREAM_TIMEOUT")
    return { outcome: "timeout", errorType: "timeout" };
  if (error instanceof ProtocolError)
    return { outcome: "error", errorType: String(error.code), code: error.code };
  return { outcome: "error", errorType: isProxyError(error) ? error.code : "_OTHER" };
}

function settle(targets: readonly Span[], failure: Failure): void {
  for (const span of targets) {
    span.set(OUTCOME, failure.outcome);
    span.set("error.type", failure.errorType);
    if (failure.code !== undefined) span.set("rpc.response.status_code", String(failure.code));
  }
}
