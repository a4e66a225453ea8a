import type {
  CallToolResult,
  Client,
  InputRequiredResult,
  JSONRPCMessage,
  JSONRPCResponse,
  Progress,
  StandardSchemaV1,
} from "@modelcontextprotocol/client";
import { ProtocolError, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import type { WireClaims } from "./modern-wire.ts";
import { plainCallResult } from "./plain-call-result.ts";
import type { PlainPost } from "./plain-http-post.ts";

/**
 * A tools/call sent to a server past the SDK Client's request machinery, doing what that
 * machinery does for the proxy's calls and nothing else. Per call the SDK made a promise chain, an
 * abort listener, a timer entry and response and progress handler entries, read the response
 * through its guard schemas twice and its result schema (plain-call-result.ts), and resolved after
 * further hops; the common call needs only its id, its progress handler, one listener and one
 * timer. What it keeps of the SDK, to the letter:
 *  - the id from the client's own counter (the ids stay one sequence, as the server saw them);
 *  - the message: `{...request, jsonrpc, id}` with the progress token (the id) in `_meta` (added to
 *    the caller's request, which is the call's own), and the
 *    era's envelope (`_envelopeOutbound`), sent on the transport with what the proxy's wrappers
 *    do on the way (call-tags.ts, modern-wire.ts);
 *  - progress through the SDK's own progress handlers (its notification checks decide);
 *  - the response, claimed on the wire (modern-wire.ts) only where the SDK would take it as one;
 *    an error as the SDK's ProtocolError; the result through the era codec's `decodeResult` (a
 *    2026 server's input_required comes back as the SDK returns it when allowed) and the call's
 *    result schema, with the SDK's error texts;
 *  - abort and timeout: notifications/cancelled with the id and the reason, and the same errors;
 *  - a closed connection fails the call as the SDK fails its own (`closeAll`).
 * Where the SDK cancels by ending the request's own stream (a 2026 server over HTTP) calls keep the
 * SDK's way (upstream-connection.ts decides); elsewhere the transport gets what the SDK gives it
 * (headers; no resumption, no request stream), and a 2025 server over streamable HTTP gets the
 * call's POST past the transport's send, its answer read in one pass (plain-http-post.ts).
 */

interface LeanCallOptions {
  /** Told the call's id before it is sent (call-tags.ts notes it instead of a tag on the wire). */
  onId?: ((id: number) => void) | undefined;
  timeout: number;
  signal: AbortSignal;
  headers?: Record<string, string> | undefined;
  onprogress: (progress: Progress) => void;
  resultSchema: StandardSchemaV1<unknown, CallToolResult>;
}

type Decoded =
  | { kind: "complete"; result: unknown }
  | { kind: "invalid"; error: Error }
  | { kind: "input_required"; inputRequests: unknown; requestState?: string; _meta?: unknown };

type Codec = { decodeResult(method: string, raw: unknown): Decoded };

/**
 * A tools/call result as the era's codec decodes it. A 2026 server's plain complete result (its
 * `resultType` "complete", the rest plain: plain-call-result.ts) is one the codec's wire schema
 * passes, and its decoding is the result without `resultType`; anything else is the codec's to
 * decode. A 2025 codec only drops a `resultType`.
 */
export function decodeCallResult(codec: Codec, era: "modern" | "legacy", raw: unknown): Decoded {
  if (
    era === "modern" &&
    raw !== null &&
    typeof raw === "object" &&
    Object.getPrototypeOf(raw) === Object.prototype
  ) {
    const { resultType, ...lifted } = raw as Record<string, unknown>;
    if (resultType === "complete" && plainCallResult(lifted, "modern") !== undefined)
      return { kind: "complete", result: lifted };
  }
  return codec.decodeResult("tools/call", raw);
}

/** The Client's seams its role classes use (the SDK is pinned exactly; lean-call.test.ts runs them). */
interface ClientInternals {
  _requestMessageId: number;
  _progressHandlers: Map<number, (progress: Progress) => void>;
  _envelopeOutbound<T>(message: T): T;
  _wireCodec(): Codec;
  _onerror(error: Error): void;
}

/**
 * A tools/call on the wire and nothing more: its id from the client's counter, told first; its
 * progress through the SDK's progress handlers; its response as claimed on the wire; its end if
 * the connection closes or the send fails. Nothing after the first of those, or after `cancel`.
 * `LeanCalls.call` is this with the SDK's clock, abort and result checks around it; a caller that
 * keeps its own (a lane from the client's line) uses it as it is.
 */
interface RawCallHandlers {
  onId?: ((id: number) => void) | undefined;
  headers?: Record<string, string> | undefined;
  onprogress: (progress: Progress) => void;
  onresponse(response: JSONRPCResponse): void;
  /** The connection closed (`closeAll`) or the message could not be sent. */
  onfailed(error: unknown): void;
}

interface RawCall {
  readonly id: number;
  /** Tells the server (notifications/cancelled with the id and the reason) unless the call has ended. */
  cancel(reason: unknown): void;
}

/** The calls in flight on one connection, failed together when it closes. */
export interface LeanCalls {
  call(
    request: { method: "tools/call"; params: Record<string, unknown> },
    options: LeanCallOptions,
  ): Promise<CallToolResult | InputRequiredResult>;
  /** Sends `request` (the call's own: its `_meta` gains the token); throws when not connected. */
  send(
    request: { method: "tools/call"; params: Record<string, unknown> },
    handlers: RawCallHandlers,
  ): RawCall;
  /** The connection closed: every call in flight fails as the SDK fails its own. */
  closeAll(): void;
}

/** An issue as the SDK words it: its path, if any, before its message. */
function issueText(issue: StandardSchemaV1.Issue): string {
  if (!issue.path?.length) return issue.message;
  const path = issue.path.map((part) => String(typeof part === "object" ? part.key : part)).join(".");
  return `${path}: ${issue.message}`;
}

const noResumption = {
  relatedRequestId: undefined,
  resumptionToken: undefined,
  onresumptiontoken: undefined,
};

/**
 * A tools/call response as the SDK's request settles it: an error as its ProtocolError; a result
 * through the era codec's `decodeResult` (a 2026 server's input_required as the SDK returns it when
 * allowed) and the call's result schema, with the SDK's error texts.
 */
export async function settleCallResponse(
  client: Client,
  response: JSONRPCResponse,
  resultSchema: StandardSchemaV1<unknown, CallToolResult>,
): Promise<CallToolResult | InputRequiredResult> {
  if (!("result" in response)) {
    throw ProtocolError.fromError(response.error.code, response.error.message, response.error.data);
  }
  const era = client.getProtocolEra() === "modern" ? "modern" : "legacy";
  const decoded = decodeCallResult((client as unknown as ClientInternals)._wireCodec(), era, response.result);
  if (decoded.kind === "invalid") throw decoded.error;
  if (decoded.kind === "input_required") {
    return {
      resultType: "input_required",
      inputRequests: decoded.inputRequests,
      ...(decoded.requestState !== undefined ? { requestState: decoded.requestState } : {}),
      ...(decoded._meta !== undefined ? { _meta: decoded._meta } : {}),
    } as InputRequiredResult;
  }
  const checked = await resultSchema["~standard"].validate(decoded.result);
  if (!checked.issues || checked.issues.length === 0) return (checked as { value: CallToolResult }).value;
  const text = checked.issues.map(issueText).join(", ");
  throw new SdkError(SdkErrorCode.InvalidResult, `Invalid result for tools/call: ${text}`);
}

/** `post`: where the connection has one, the call's POST past the SDK's transport (plain-http-post.ts). */
export function createLeanCalls(client: Client, claims: WireClaims, post?: PlainPost): LeanCalls {
  const internals = client as unknown as ClientInternals;
  const inFlight = new Set<(error: Error) => void>();

  const send: LeanCalls["send"] = (request, handlers) => {
    const transport = client.transport;
    if (!transport) throw new Error("Not connected");
    const id = internals._requestMessageId++;
    handlers.onId?.(id);
    internals._progressHandlers.set(id, handlers.onprogress);
    // The request is the call's own (forward-call.ts builds one a call): its `_meta` gains the
    // token in place, where the SDK copies the request twice to add it.
    const meta = request.params._meta as Record<string, unknown> | undefined;
    if (meta) meta.progressToken = id;
    else request.params._meta = { progressToken: id };
    const outbound = internals._envelopeOutbound({
      method: request.method,
      params: request.params,
      jsonrpc: "2.0" as const,
      id,
    });
    let isOver = false;
    const end = () => {
      isOver = true;
      internals._progressHandlers.delete(id);
      claims.release(id);
      inFlight.delete(closed);
    };
    const closed = (error: Error) => {
      if (isOver) return;
      end();
      handlers.onfailed(error);
    };
    inFlight.add(closed);
    claims.claim(id, (response: JSONRPCResponse) => {
      if (isOver) return;
      end();
      handlers.onresponse(response);
    });
    (post && handlers.headers === undefined
      ? post(claims.outgoing(outbound as JSONRPCMessage) as JSONRPCMessage & { id: number })
      : transport.send(outbound, { ...noResumption, headers: handlers.headers, requestSignal: undefined })
    ).catch((error: unknown) => {
      if (isOver) return;
      end();
      handlers.onfailed(error);
    });
    return {
      id,
      cancel(reason) {
        if (isOver) return;
        end();
        client.transport
          ?.send(
            internals._envelopeOutbound({
              jsonrpc: "2.0" as const,
              method: "notifications/cancelled",
              params: { requestId: id, reason: String(reason) },
            }),
            noResumption,
          )
          .catch((error) => internals._onerror(new Error(`Failed to send cancellation: ${error}`)));
      },
    };
  };

  return {
    send,
    closeAll() {
      const error = new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed");
      for (const fail of [...inFlight]) fail(error);
    },
    call(request, options) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let onAbort: (() => void) | undefined;
      return new Promise<CallToolResult | InputRequiredResult>((resolve, reject) => {
        const { signal } = options;
        if (!client.transport) {
          reject(new Error("Not connected"));
          return;
        }
        if (signal.aborted) {
          const reason = signal.reason;
          throw reason instanceof SdkError
            ? reason
            : new SdkError(SdkErrorCode.RequestTimeout, String(reason));
        }
        const call = send(request, {
          onId: options.onId,
          headers: options.headers,
          onprogress: options.onprogress,
          onfailed: reject,
          onresponse(response) {
            // As the SDK settles a response: its timer goes first.
            clearTimeout(timer);
            settleCallResponse(client, response, options.resultSchema).then(resolve, reject);
          },
        });
        const cancel = (reason: unknown) => {
          call.cancel(reason);
          reject(
            reason instanceof SdkError ? reason : new SdkError(SdkErrorCode.RequestTimeout, String(reason)),
          );
        };
        onAbort = () => cancel(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
        timer = setTimeout(
          () =>
            cancel(
              new SdkError(SdkErrorCode.RequestTimeout, "Request timed out", { timeout: options.timeout }),
            ),
          options.timeout,
        );
      }).finally(() => {
        if (onAbort) options.signal.removeEventListener("abort", onAbort);
        clearTimeout(timer);
      });
    },
  };
}
