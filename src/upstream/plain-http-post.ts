import type { FetchLike, JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import {
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { EDGE_BYTES, nextLineEnd } from "./bounded-fetch.ts";
import { answerInPlaceOf, isJsonRpcMessage, tooLargeError } from "./json-lines.ts";

/**
 * A lean call's POST to a 2025 server over streamable HTTP (lean-call.ts), past the SDK transport's
 * `send`: the same request (the transport's own headers, its session, protocol version and token,
 * through its redirect policy) and the same handling of what comes back, read in one pass. On the
 * SDK's way the answer's bytes went through four streams (call-tags.ts's watcher, bounded-fetch.ts's
 * bounds, a text decoder and an event parser) and each message through the SDK's schema; here one
 * reader bounds each event as bounded-fetch.ts does (an event over `maxBytes` is dropped and a
 * response's -32010 error takes its place), notes each server request under the posted call as
 * call-tags.ts does, and checks each message as the stdio transport does (json-lines.ts's
 * `isJsonRpcMessage`) before the transport's `onmessage` gets it. What the SDK does on the way out
 * is kept: a 401 or 403 (a login or a wider scope) is handed to the transport's own send, which
 * posts again after its auth flow; any other refusal is the SDK's error; an SSE answer whose events
 * carry ids and that ends without the response is resumed by the transport (`_scheduleReconnection`).
 * Undefined (the SDK's way) for any transport but the SDK's streamable HTTP one with the fetch
 * given, unwrapped (a DPoP provider wraps it).
 */
export type PlainPost = (message: JSONRPCMessage & { id: number }) => Promise<void>;

export interface PlainPostOptions {
  /** The fetch the transport was given (call-tags.ts's): if the SDK wrapped it, posts stay the SDK's. */
  given: FetchLike;
  /** The fetch under it, which this reads from directly. */
  base: FetchLike;
  /** Bytes one event (or a JSON body) may have (maxResultBytes). */
  maxBytes: number;
  /** Tells call-tags.ts a server request came on the stream of the posted call `postedId`. */
  notePosted(requestId: unknown, postedId: string): void;
}

/** The transport's members the post uses (the SDK is pinned exactly; plain-http-post.test.ts runs them). */
interface TransportInternals {
  _url: URL;
  _fetch?: FetchLike;
  _requestInit?: RequestInit;
  _abortController?: AbortController;
  _serverRetryMs?: number;
  _commonHeaders(): Promise<Headers>;
  _redirects(fetch: FetchLike): FetchLike;
  _unfollowedRedirect(url: URL, response: Response): string | undefined;
  _send(message: JSONRPCMessage, options: undefined, isAuthRetry: boolean): Promise<void>;
  _scheduleReconnection(options: Record<string, unknown>, attempt: number): void;
}

export function plainPostFor(transport: Transport, options: PlainPostOptions): PlainPost | undefined {
  if (!(transport instanceof StreamableHTTPClientTransport)) return undefined;
  const internals = transport as unknown as TransportInternals;
  if (internals._fetch !== options.given) return undefined;
  const fetchOnce = internals._redirects(options.base);
  const deliver = (message: JSONRPCMessage) => transport.onmessage?.(message);
  const failed = (error: unknown) =>
    transport.onerror?.(error instanceof Error ? error : new Error(String(error)));

  return async (message) => {
    try {
      const headers = await internals._commonHeaders();
      headers.set("content-type", "application/json");
      const types = [
        ...(headers
          .get("accept")
          ?.split(",")
          .map((type) => type.trim().toLowerCase()) ?? []),
        "application/json",
        "text/event-stream",
      ];
      headers.set("accept", [...new Set(types)].join(", "));
      const response = await fetchOnce(internals._url, {
        ...internals._requestInit,
        method: "POST",
        headers,
        body: JSON.stringify(message),
        signal: internals._abortController?.signal,
      });
      if (response.status === 401 || response.status === 403) {
        // The SDK's auth flow, and its own post after it.
        await response.text().catch(() => undefined);
        return await internals._send(message, undefined, false);
      }
      if (!response.ok) {
        const text = await response.text().catch(() => null);
        const reason = internals._unfollowedRedirect(internals._url, response) ?? text;
        throw new SdkHttpError(
          SdkErrorCode.ClientHttpNotImplemented,
          `Error POSTing to endpoint: ${reason}`,
          {
            status: response.status,
            statusText: response.statusText,
            text,
          },
        );
      }
      if (response.status === 202) {
        await response.text().catch(() => undefined);
        return;
      }
      const type = response.headers.get("content-type");
      const essence = type?.split(";")[0]?.trim().toLowerCase();
      if (essence === "text/event-stream") {
        void readEvents(response.body, String(message.id));
      } else if (essence === "application/json") {
        const body = await boundedText(response, options.maxBytes);
        const parsed: unknown = JSON.parse(body);
        for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
          if (!isJsonRpcMessage(item))
            throw new Error(`the server answered JSON that is not JSON-RPC: ${body.slice(0, 120)}`);
          deliver(item as JSONRPCMessage);
        }
      } else {
        await response.text().catch(() => undefined);
        throw new SdkError(SdkErrorCode.ClientHttpUnexpectedContent, `Unexpected content type: ${type}`, {
          contentType: type,
        });
      }
    } catch (error) {
      failed(error);
      throw error;
    }
  };

  /** An SSE answer, event by event, as `_handleSseStream` reads it (see readSse for the bounds). */
  async function readEvents(body: ReadableStream<Uint8Array> | null, postedId: string): Promise<void> {
    if (!body) return;
    let lastEventId: string | undefined;
    let hasResponse = false;
    const isAborted = () => internals._abortController?.signal.aborted === true;
    try {
      await readSse(body, options.maxBytes, {
        event(event) {
          if (event.id) lastEventId = event.id;
          if (event.retry !== undefined) internals._serverRetryMs = event.retry;
          if (!event.data || (event.type !== undefined && event.type !== "message")) return;
          try {
            const parsed: unknown = JSON.parse(event.data);
            if (!isJsonRpcMessage(parsed))
              throw new Error(`the server sent JSON that is not JSON-RPC: ${event.data.slice(0, 120)}`);
            const { id, method } = parsed as { id?: unknown; method?: unknown };
            if (method === undefined) hasResponse = true;
            else if (id !== undefined) options.notePosted(id, postedId);
            deliver(parsed as JSONRPCMessage);
          } catch (error) {
            failed(error);
          }
        },
        oversized(head, tail, bytes) {
          const error = answerInPlaceOf(head, tail, bytes, options.maxBytes);
          if (!error) return;
          hasResponse = true;
          deliver(error);
        },
      });
    } catch (error) {
      if (isAborted()) return;
      failed(new Error(`SSE stream disconnected: ${error}`));
    }
    // Events with ids can be resumed: the transport asks for the rest, as after its own POST.
    if (lastEventId !== undefined && !hasResponse && internals._abortController && !isAborted()) {
      internals._scheduleReconnection({ resumptionToken: lastEventId }, 0);
    }
  }
}

/** A JSON body as text, failing unread past `maxBytes` (bounded-fetch.ts's `boundBody`). */
async function boundedText(response: Response, maxBytes: number): Promise<string> {
  const tooLarge = (bytes: string) => tooLargeError(bytes, maxBytes);
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge(String(declared));
  }
  if (!response.body) return "";
  const pieces: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.length;
    if (size > maxBytes) {
      await response.body.cancel().catch(() => undefined);
      throw tooLarge(`more than ${maxBytes}`);
    }
    pieces.push(chunk);
  }
  return Buffer.concat(pieces).toString("utf8");
}

export interface SseEvent {
  type?: string | undefined;
  data: string;
  id?: string | undefined;
  retry?: number | undefined;
}

const LF = 0x0a;
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Server-sent events from `body` as the SSE spec frames them (lines end in CRLF, LF or CR; `data`
 * lines joined by LF; a blank line ends an event; `:` lines are comments), each event held whole
 * only while it is at most `maxBytes`: a longer one is not held, only its first and last bytes,
 * and is told to `oversized` with its size instead. Only line ends are looked for in the bytes;
 * each line is decoded once.
 */
export async function readSse(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  on: { event(event: SseEvent): void; oversized(head: string, tail: string, bytes: number): void },
): Promise<void> {
  let line: Uint8Array[] = [];
  let hasContent = false;
  let eventBytes = 0;
  let isAfterCr = false;
  let isSkipping = false;
  let isFirstLine = true;
  let head = "";
  let tail: Uint8Array = new Uint8Array(0);
  let data: string[] = [];
  let type: string | undefined;
  let id: string | undefined;
  let retry: number | undefined;

  const endEvent = () => {
    if (isSkipping) on.oversized(head, decoder.decode(tail), eventBytes);
    else if (data.length > 0 || retry !== undefined) on.event({ type, data: data.join("\n"), id, retry });
    data = [];
    type = undefined;
    retry = undefined;
    eventBytes = 0;
    isSkipping = false;
    head = "";
    tail = new Uint8Array(0);
  };
  const field = (text: string) => {
    if (isFirstLine && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const name = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "data") data.push(value);
    else if (name === "event") type = value;
    else if (name === "id" && !value.includes("\0")) id = value;
    else if (name === "retry" && /^\d+$/.test(value)) retry = Number(value);
  };
  /** A line ended: a blank one ends the event. */
  const endLine = () => {
    if (!hasContent) endEvent();
    else if (!isSkipping) field(decoder.decode(line.length === 1 ? line[0] : Buffer.concat(line)));
    isFirstLine = false;
    line = [];
    hasContent = false;
  };
  /** The event grew past the limit: what it holds goes, its head kept to read an id from. */
  const skip = () => {
    isSkipping = true;
    const current = lineData(decoder.decode(Buffer.concat(line)));
    head = `${data.join("\n")}${data.length > 0 ? "\n" : ""}${current}`.slice(0, EDGE_BYTES);
    data = [];
    line = [];
  };
  const keepTail = (piece: Uint8Array) => {
    const joined = new Uint8Array(tail.length + piece.length);
    joined.set(tail);
    joined.set(piece, tail.length);
    tail = joined.slice(-EDGE_BYTES);
  };

  for await (const chunk of body) {
    let at = 0;
    if (isAfterCr && chunk[0] === LF) at = 1; // a CRLF split across chunks
    isAfterCr = false;
    while (at < chunk.length) {
      const newline = nextLineEnd(chunk, at);
      const end = newline < 0 ? chunk.length : newline;
      if (end > at) {
        const piece = chunk.subarray(at, end);
        hasContent = true;
        eventBytes += piece.length;
        if (isSkipping) keepTail(piece);
        else {
          // A copy: the chunk's buffer may be reused once this loop asks for the next.
          line.push(piece.slice());
          if (eventBytes > maxBytes) {
            skip();
            keepTail(piece);
          }
        }
      }
      if (newline < 0) break;
      endLine();
      if (chunk[newline] !== LF) {
        if (newline + 1 === chunk.length) {
          isAfterCr = true;
          break;
        }
        at = chunk[newline + 1] === LF ? newline + 2 : newline + 1;
      } else at = newline + 1;
    }
  }
  // An event the stream ends inside is not dispatched (as the SSE spec, and the SDK's parser, have it).
}

/** A `data:` line's value, or the line as it is (the head an id is read from). */
function lineData(text: string): string {
  if (!text.startsWith("data:")) return "";
  return text.slice(text.startsWith("data: ") ? 6 : 5);
}
