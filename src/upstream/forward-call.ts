import type {
  CallToolResult,
  ClientCapabilities,
  InputRequiredResult,
  LoggingLevel,
  LoggingMessageNotification,
  Progress,
  Result,
} from "@modelcontextprotocol/client";
import { LOG_LEVEL_META_KEY, ProtocolError, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { isProxyError, ProxyError } from "../errors.ts";
import type { QuotaHolder } from "../limits/principal-quotas.ts";
import type { TraceHeaders } from "../tracing/trace-context.ts";
import type { Span } from "../tracing/tracer.ts";
import { CALL_META_KEY } from "./call-tags.ts";
import { CAPABILITIES_META_KEY } from "./modern-wire.ts";
import { callResultSchema } from "./plain-call-result.ts";
import type { ClientBoundRequest } from "./relayed-messages.ts";
import { isNestedDeeperThan, MAX_RESULT_DEPTH } from "./result-depth.ts";
import type { UpstreamConnection } from "./upstream-connection.ts";
import { isConnectionRefused, isSessionLost, upstreamErrorText } from "./upstream-errors.ts";

/** What a call carries from the client that made it, whatever the call (upstream-pool.ts passes it on). */
export interface CallOptions {
  /** The client cancelled: the upstream is told (notifications/cancelled) and the call ends. */
  signal?: AbortSignal | undefined;
  /** Progress the upstream reports (the timeout restarts with each). */
  onprogress?: ((progress: Progress) => void) | undefined;
  /** The call's key in the client sessions (see relay-routing.ts). */
  caller?: string | undefined;
  /** The client session the call came from. */
  session?: string | undefined;
  /** What the caller can answer, told to a 2026 server with the call (a 2025 one was told at initialize). */
  clientCapabilities?: ClientCapabilities | undefined;
  /** A retry of a 2026 server's input_required: the caller's answers and the server's own state. */
  inputResponses?: Record<string, unknown> | undefined;
  requestState?: string | undefined;
  /** Where a 2025 server's requests during the call go for a caller without a session (AskClient). */
  askClient?: AskClient | undefined;
  /** The caller's log level, told to a 2026 server with the call, and its request's stream (CallLog). */
  log?: CallLog | undefined;
  /** The span of the client's request (src/tracing/), while traces are on: the call's span is its child. */
  span?: Span | undefined;
  /** The trace context the call carries upstream: in `_meta` (SEP-414), and as headers over streamable HTTP. */
  traceContext?: TraceHeaders | undefined;
  /** Told how long the call waited for its turn under the server's call limits, in ms (0: none). */
  onAdmitted?: ((waitedMs: number) => void) | undefined;
  /**
   * Who called, when the HTTP listener takes access tokens (src/auth/resource/): the call is counted
   * and limited per principal. Never sent upstream.
   */
  principal?: QuotaHolder | undefined;
}

/**
 * One tools/call on its way upstream, bounded in time two ways: `callTimeoutMs` without an answer
 * or a progress notification (the clock stops while the call waits on the client: a sampling or
 * elicitation request relayed to it may wait for a person), and `maxCallMs` in all, progress or
 * not. When either runs out, or the client cancels, the server is sent notifications/cancelled
 * with its own request id (the SDK does that on abort and on its timeout), and the connection goes
 * on serving other calls. A request refused because the server lost our session never ran: it is
 * sent again, once, on a new session (2025 servers over HTTP: a 2026 server has no sessions, and
 * its 404 means an unknown method).
 * To a 2026-07-28 server the call carries the caller's capabilities (`clientCapabilities`; none
 * when unset), its log level (`log`: a 2026 request's, or a 2025 session's; none when unset, and
 * then the server sends no log message)
 * and, over HTTP, its marked arguments as Mcp-Param-* headers (param-headers.ts); its
 * `input_required` answer is returned as it is (the caller's to relay), and a retry carries the
 * caller's `inputResponses` and the server's own `requestState` back.
 * prompts/get and resources/read go the same way (`method` and `params`), with the same clocks,
 * relays and input rounds. A call is what it is sent to (`CallTarget`), what it carries from its
 * client (`CallOptions`), its clocks (`CallLimits`) and its route to the server (`CallRoute`).
 */
export interface CallTarget {
  server: string;
  /** tools/call unless set; prompts/get and resources/read send `params` as they are. */
  method?: InputMethod | undefined;
  /** The tool (tools/call), or what the messages name (the prompt, the resource URI). */
  tool: string;
  args: Record<string, unknown> | undefined;
  params?: Record<string, unknown> | undefined;
}

/** The call's two clocks (see `forwardToolCall`). */
export interface CallLimits {
  callTimeoutMs: number;
  maxCallMs: number;
}

/**
 * The caller's log level, sent on with the call to a 2026 server (which has no session to remember
 * one): a 2026-07-28 request's `_meta` logLevel, or a 2025 session's (logging/setLevel). A caller
 * without a session gets the server's log messages at or above it on the request's own stream
 * (`send`); a session's go to the session as a 2025 server's do (server/federation/upstream-messages.ts).
 */
export interface CallLog {
  level: LoggingLevel;
  send(notification: LoggingMessageNotification): Promise<void>;
}

/** The requests that may answer input_required (MRTR) in 2026-07-28. */
export type InputMethod = "tools/call" | "prompts/get" | "resources/read";

/** Asks the calling client, by an input round, what a 2025 server asked during its call. */
export type AskClient = (request: ClientBoundRequest, signal: AbortSignal) => Promise<Result>;

/** A call in flight, as the server's requests to the client find it (relay-routing.ts). */
export interface ActiveCall {
  readonly caller: string | undefined;
  readonly session: string | undefined;
  /** Sent with the call, or noted against its id (call-tags.ts), so the server's requests can be told back to it. */
  readonly tag: string;
  /** Set for a caller without a session: its requests are asked by input rounds instead. */
  readonly askClient?: AskClient | undefined;
  /** Runs `work` (a relayed request) with the call's idle clock stopped. */
  waitOnClient<T>(work: () => Promise<T>): Promise<T>;
  /** The caller's log level and stream (a caller with a session gets its messages by the session). */
  readonly log?: CallLog | undefined;
}

export interface CallRoute {
  /** The live connection, if there is one. */
  current(): UpstreamConnection | undefined;
  /** The connection, started if need be. */
  connection(): Promise<UpstreamConnection>;
  drop(connection: UpstreamConnection, reason: string): Promise<void>;
  isClosed(): boolean;
  /** Marks the call in flight on its server until the returned function is called. */
  track(call: ActiveCall): () => void;
}

let tagCounter = 0;

/**
 * A new tag for a call in flight on a server (`ActiveCall.tag`): unique in the process, whoever
 * sends the call (forward-call, or a plain lane of any session), since the server's requests find
 * their call by it (relay-routing.ts).
 */
export function newCallTag(): string {
  return `c${++tagCounter}`;
}

export async function forwardToolCall(
  target: CallTarget,
  call: CallOptions,
  limits: CallLimits,
  route: CallRoute,
): Promise<CallToolResult | InputRequiredResult> {
  const { server, tool } = target;
  const method = target.method ?? "tools/call";
  // One controller ended by either the client's cancel or the idle clock. Not AbortSignal.any: in
  // Bun its combined signals are never freed (about 6 KB a call, bench/load-bench.ts found it).
  const controller = new AbortController();
  const signal = controller.signal;
  let isIdle = false;
  let waiting = 0;
  const onIdle = () => {
    isIdle = true;
    controller.abort(new SdkError(SdkErrorCode.RequestTimeout, `no answer for ${limits.callTimeoutMs} ms`));
  };
  let idle = setTimeout(onIdle, limits.callTimeoutMs);
  const restartIdle = () => {
    clearTimeout(idle);
    if (waiting === 0 && !signal.aborted) idle = setTimeout(onIdle, limits.callTimeoutMs);
  };
  const tag = newCallTag();
  let sentOn: UpstreamConnection | undefined;
  const untrack = route.track({
    caller: call.caller,
    session: call.session,
    tag,
    askClient: call.askClient,
    log: call.log,
    async waitOnClient(work) {
      waiting++;
      clearTimeout(idle);
      try {
        return await work();
      } finally {
        waiting--;
        restartIdle();
      }
    },
  });
  const onCancel = () => controller.abort(call.signal?.reason);
  if (call.signal?.aborted) onCancel();
  else call.signal?.addEventListener("abort", onCancel, { once: true });
  // A raw tools/call, not client.callTool: the result goes back to the agent exactly as the
  // upstream sent it, without the client-side output-schema checks of the SDK (a 2026 server's
  // content blocks of no defined type excepted: lenient-results.ts).
  const send = async (connection: UpstreamConnection) => {
    sentOn = connection;
    const isModern = connection.era === "modern";
    // A tools/call goes past the SDK's request machinery where the connection allows (lean-call.ts).
    const lean = method === "tools/call" ? connection.lean : undefined;
    const marked = method === "tools/call" ? connection.paramHeaders(tool, target.args) : undefined;
    // Stdio ignores request headers: there the trace context travels in `_meta` alone.
    const headers = call.traceContext ? { ...marked, ...call.traceContext } : marked;
    // Built key by key, not spread from parts: this is made for every call.
    const params: Record<string, unknown> =
      method === "tools/call" ? { name: tool } : { ...(target.params ?? {}) };
    if (method === "tools/call" && target.args) params.arguments = target.args;
    // Only a 2026 server knows input rounds; a 2025 one asks the client during the call instead.
    if (isModern && call.inputResponses) params.inputResponses = call.inputResponses;
    if (isModern && call.requestState !== undefined) params.requestState = call.requestState;
    const meta: Record<string, unknown> = { ...(params._meta as Record<string, unknown> | undefined) };
    // The tag names the call to call-tags.ts, which notes its id and strips it; a lean call's id is
    // known before it is sent, and noted without it.
    if (!lean) meta[CALL_META_KEY] = tag;
    if (isModern && call.clientCapabilities) meta[CAPABILITIES_META_KEY] = call.clientCapabilities;
    if (isModern && call.log) meta[LOG_LEVEL_META_KEY] = call.log.level;
    if (call.traceContext) {
      // Ours replace a client's own (prompts/get and resources/read pass its `_meta` on).
      meta.tracestate = undefined;
      Object.assign(meta, call.traceContext);
    }
    params._meta = meta;
    const request = { method, params } as never;
    // Asked for always: progress keeps a long call alive; it reaches the client when it wants it.
    const onprogress = (progress: Progress) => {
      restartIdle();
      call.onprogress?.(progress);
    };
    // A tools/call result is checked by plain-call-result.ts (the SDK's schema where it is not plain).
    // The SDK's clock bounds the whole call (`timeout`); the idle clock above is ours. The server's
    // input_required comes back as it is: the caller answers it, not the proxy.
    const result = (await (lean
      ? lean.call(request, {
          timeout: limits.maxCallMs,
          signal,
          headers,
          onprogress,
          resultSchema: callResultSchema(connection.client),
          onId: (id) => connection.tags.note(tag, id),
        })
      : method !== "tools/call"
        ? connection.client.request(request, sdkOptions(signal, limits.maxCallMs, headers, onprogress))
        : connection.client.request(
            request,
            callResultSchema(connection.client),
            sdkOptions(signal, limits.maxCallMs, headers, onprogress),
          ))) as CallToolResult | InputRequiredResult;
    if (isNestedDeeperThan(result, MAX_RESULT_DEPTH)) throw tooDeep(`${tool} on ${server}`);
    return result;
  };
  try {
    // Connected already, as nearly always: no await on the way.
    const connection = route.current() ?? (await route.connection());
    try {
      return await send(connection);
    } catch (error) {
      const lost =
        connection.era === "legacy" && isSessionLost(error)
          ? "the server no longer knows our session (it restarted or expired it)"
          : isConnectionRefused(error)
            ? "the server refused the connection"
            : undefined;
      if (!lost || signal.aborted || route.isClosed()) throw error;
      await route.drop(connection, lost);
      return await send(await route.connection());
    }
  } catch (error) {
    // Our own timeouts only: the SDK's carries the timeout it was given; a server may send -32001 itself.
    const isOverTime =
      !isIdle && (error as { data?: { timeout?: unknown } }).data?.timeout === limits.maxCallMs;
    if (
      error instanceof SdkError &&
      error.code === SdkErrorCode.RequestTimeout &&
      (isIdle || isOverTime) &&
      !call.signal?.aborted
    ) {
      throw callTimedOut(target, limits, isOverTime, error);
    }
    throw asCallError(target, error);
  } finally {
    clearTimeout(idle);
    untrack();
    sentOn?.tags.forget(tag);
    call.signal?.removeEventListener("abort", onCancel);
  }
}

/** The SDK's request options for a call that goes its way. */
function sdkOptions(
  signal: AbortSignal,
  timeout: number,
  headers: Record<string, string> | undefined,
  onprogress: (progress: Progress) => void,
) {
  return { timeout, signal, ...(headers ? { headers } : {}), allowInputRequired: true, onprogress };
}

/** A call cancelled on its server by one of its clocks (`maxCallMs` in all, or `callTimeoutMs` idle). */
export function callTimedOut(
  { tool, server }: Pick<CallTarget, "tool" | "server">,
  limits: CallLimits,
  isOverTime: boolean,
  cause: unknown,
): ProxyError {
  const why = isOverTime
    ? `ran longer than ${limits.maxCallMs} ms in all (maxCallMs)`
    : `gave no answer or progress for ${limits.callTimeoutMs} ms (callTimeoutMs)`;
  return new ProxyError(
    "UPSTREAM_TIMEOUT",
    `${tool} on ${server} ${why}; it was cancelled on the server. Try again, or give the server more time.`,
    { cause },
  );
}

/**
 * What a failed call throws: the server's own JSON-RPC error is its answer; anything else (a
 * refused POST, a closed pipe) is told without what the transport read from the wire.
 */
export function asCallError({ tool, server }: Pick<CallTarget, "tool" | "server">, error: unknown): unknown {
  if (error instanceof ProtocolError || isProxyError(error)) return error;
  return new ProxyError("UPSTREAM_UNAVAILABLE", `${tool} on ${server} failed: ${upstreamErrorText(error)}`, {
    cause: error,
  });
}

/** A result the proxy cannot write to its client (see result-depth.ts): an error at once instead. */
export function tooDeep(what: string): ProxyError {
  return new ProxyError(
    "UPSTREAM_UNAVAILABLE",
    `${what} returned a result nested more than ${MAX_RESULT_DEPTH} levels deep, which the proxy does not pass on. ` +
      "The server ran the request; its result cannot be shown.",
  );
}
