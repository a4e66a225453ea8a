import {
  type CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  McpError,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import { ProxyError } from "../errors.ts";
import { isConnectionRefused, isSessionLost, type UpstreamConnection } from "./upstream-connection.ts";

/**
 * One tools/call on its way upstream, bounded in time two ways: `callTimeoutMs` without an answer
 * or a progress notification, and `maxCallMs` in all, progress or not. When either runs out, or
 * the client cancels, the server is sent notifications/cancelled with its own request id (the
 * SDK does that on abort), and the connection goes on serving other calls. A request refused
 * because the server lost our session never ran: it is sent again, once, on a new session.
 */
export interface ForwardedCall {
  server: string;
  tool: string;
  args: Record<string, unknown> | undefined;
  limits: { callTimeoutMs: number; maxCallMs: number };
  signal?: AbortSignal | undefined;
  onprogress?: ((progress: Progress) => void) | undefined;
}

export interface CallRoute {
  /** The live connection, if there is one. */
  current(): UpstreamConnection | undefined;
  /** The connection, started if need be. */
  connection(): Promise<UpstreamConnection>;
  drop(connection: UpstreamConnection, reason: string): Promise<void>;
  isClosed(): boolean;
}

export async function forwardToolCall(call: ForwardedCall, route: CallRoute): Promise<CallToolResult> {
  const { server, tool, limits } = call;
  // One controller ended by either the client's cancel or maxCallMs. Not AbortSignal.any: in Bun
  // its combined signals are never freed (about 6 KB a call, bench/load-bench.ts found it).
  const controller = new AbortController();
  const signal = controller.signal;
  let isOverTime = false;
  const timer = setTimeout(() => {
    isOverTime = true;
    controller.abort(new McpError(ErrorCode.RequestTimeout, `ran longer than ${limits.maxCallMs} ms`));
  }, limits.maxCallMs);
  const onCancel = () => controller.abort(call.signal?.reason);
  if (call.signal?.aborted) onCancel();
  else call.signal?.addEventListener("abort", onCancel, { once: true });
  // A raw tools/call, not client.callTool: the result goes back to the agent exactly as the
  // upstream sent it, without the client-side output-schema checks of the SDK.
  const send = async (connection: UpstreamConnection) =>
    (await connection.client.request(
      { method: "tools/call", params: { name: tool, ...(call.args ? { arguments: call.args } : {}) } },
      CallToolResultSchema,
      {
        timeout: limits.callTimeoutMs,
        resetTimeoutOnProgress: true,
        signal,
        // Asked for always: progress keeps a long call alive; it reaches the client when it wants it.
        onprogress: (progress) => call.onprogress?.(progress),
      },
    )) as CallToolResult;
  try {
    // Connected already, as nearly always: no await on the way.
    const connection = route.current() ?? (await route.connection());
    try {
      return await send(connection);
    } catch (error) {
      const lost = isSessionLost(error)
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
    const isOurs =
      isOverTime || (error as { data?: { timeout?: unknown } }).data?.timeout === limits.callTimeoutMs;
    if (
      error instanceof McpError &&
      error.code === ErrorCode.RequestTimeout &&
      isOurs &&
      !call.signal?.aborted
    ) {
      const why = isOverTime
        ? `ran longer than ${limits.maxCallMs} ms in all (maxCallMs)`
        : `gave no answer or progress for ${limits.callTimeoutMs} ms (callTimeoutMs)`;
      throw new ProxyError(
        "UPSTREAM_TIMEOUT",
        `${tool} on ${server} ${why}; it was cancelled on the server. Try again, or give the server more time.`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    clearTimeout(timer);
    call.signal?.removeEventListener("abort", onCancel);
  }
}
