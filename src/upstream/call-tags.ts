import type { FetchLike, JSONRPCMessage, Transport } from "@modelcontextprotocol/client";

/**
 * Which call of ours a server's request to the client belongs to (sampling, elicitation, roots
 * asked while serving a tools/call), read from the wire and never guessed from timing: the answer
 * decides which person's model sees the request, and two sessions may call one server at once.
 *
 *  - Over streamable HTTP a server sends such a request on the response stream of the POST that
 *    carried the call; `fetch` reads those streams as they pass to the SDK and notes which posted
 *    request each server request arrived under.
 *  - On any transport, a server may name the call's progress token in the request's `_meta`.
 *
 * Each call is tagged when it is sent (`CALL_META_KEY` in its `_meta`, stripped before it leaves, so
 * the server never sees it) so that its JSON-RPC id, which the SDK picks, can be told back to it.
 * A lean call (lean-call.ts) picks its id itself: it goes untagged, and its id is noted (`note`).
 */
export const CALL_META_KEY = "io.mcpproxy/call";

export interface CallTags {
  /** Wraps the transport's `send`: notes the JSON-RPC id of each tagged call and strips the tag. */
  tagCalls(transport: Transport): void;
  /** Notes the JSON-RPC id of a call sent untagged by one who knows its id (lean-call.ts). */
  note(tag: string, id: string | number): void;
  /** A fetch for the HTTP client transports that notes the requests arriving on each POST's stream. */
  fetch: FetchLike;
  /** Notes that a server request arrived on the stream of the POST of call id `postedId`. */
  notePosted(requestId: unknown, postedId: string): void;
  /** The tag of the call a server's request belongs to, when the wire tells. */
  callOf(
    request: { params?: { _meta?: Record<string, unknown> } | undefined },
    requestId: unknown,
  ): string | undefined;
  /** The call ended: its ids are let go. */
  forget(tag: string): void;
}

/** How much of an SSE event is read to see whether it is a request (its method comes first in practice). */
const HEAD_CHARS = 512;
/** The most of one request kept to read its id: a sampling request may carry images. */
const MAX_REQUEST_CHARS = 16 * 1024 * 1024;
const CLIENT_BOUND = /"method"\s*:\s*"(?:sampling\/createMessage|elicitation\/create|roots\/list)"/;

export function createCallTags(baseFetch: FetchLike = (url, init) => fetch(url, init)): CallTags {
  /** The JSON-RPC id the SDK gave each tagged call, by tag, and back. */
  const idOfTag = new Map<string, string>();
  const tagOfId = new Map<string, string>();
  /** The posted request (its JSON-RPC id) each server request arrived under, by the server request's id. */
  const postedUnder = new Map<string, string>();

  const note = (serverRequestId: unknown, postedId: string) => {
    if (typeof serverRequestId === "string" || typeof serverRequestId === "number") {
      postedUnder.set(String(serverRequestId), postedId);
    }
  };

  return {
    note(tag, id) {
      idOfTag.set(tag, String(id));
      tagOfId.set(String(id), tag);
    },

    tagCalls(transport) {
      // Patched in place rather than wrapped: the SDK and the rest of the proxy use the transport's
      // own members (session ids, protocol version, OAuth), which a wrapper would have to mirror.
      const send = transport.send.bind(transport);
      transport.send = (message, options) => send(untagged(message, idOfTag, tagOfId), options);
    },

    notePosted: note,

    async fetch(url, init) {
      const response = await baseFetch(url, init);
      if (init?.method !== "POST" || !response.body) return response;
      if (!response.headers.get("content-type")?.includes("text/event-stream")) return response;
      const postedId = postedRequestId(init.body);
      if (postedId === undefined || !tagOfId.has(postedId)) return response;
      return new Response(response.body.pipeThrough(watchRequests((id) => note(id, postedId))), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    },

    callOf(request, requestId) {
      const posted = postedUnder.get(String(requestId));
      if (posted !== undefined && tagOfId.has(posted)) return tagOfId.get(posted);
      const token = request.params?._meta?.progressToken;
      if (typeof token === "string" || typeof token === "number") return tagOfId.get(String(token));
      return undefined;
    },

    forget(tag) {
      const id = idOfTag.get(tag);
      idOfTag.delete(tag);
      if (id === undefined) return;
      tagOfId.delete(id);
      for (const [request, posted] of postedUnder) if (posted === id) postedUnder.delete(request);
    },
  };
}

/** The message as it goes on the wire: a tagged call's tag noted against its id and removed. */
function untagged(
  message: JSONRPCMessage,
  idOfTag: Map<string, string>,
  tagOfId: Map<string, string>,
): JSONRPCMessage {
  if (!("method" in message) || !("id" in message)) return message;
  const params = message.params as { _meta?: Record<string, unknown> } | undefined;
  const tag = params?._meta?.[CALL_META_KEY];
  if (typeof tag !== "string") return message;
  idOfTag.set(tag, String(message.id));
  tagOfId.set(String(message.id), tag);
  const { [CALL_META_KEY]: _tag, ...meta } = params!._meta!;
  return { ...message, params: { ...params, _meta: meta } } as JSONRPCMessage;
}

/** A POST that carries a call names its method; anything else is passed without parsing. */
const CALL_HINT = /"(?:tools\/call|prompts\/get|resources\/read)"/;
const CALL_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);

/** The id of the single JSON-RPC request a POST carries, if it is a call (tools/call, prompts/get, resources/read). */
function postedRequestId(body: unknown): string | undefined {
  if (typeof body !== "string" || !CALL_HINT.test(body)) return undefined;
  try {
    const message = JSON.parse(body) as { id?: unknown; method?: unknown };
    return typeof message.method === "string" &&
      CALL_METHODS.has(message.method) &&
      (typeof message.id === "number" || typeof message.id === "string")
      ? String(message.id)
      : undefined;
  } catch {
    return undefined;
  }
}
/**
 * Passes an SSE stream through unchanged and calls `found` with the id of every server→client
 * request in it, before the bytes reach the SDK (so the id is known when its handler runs). Only
 * the head of each event is kept until it shows a request: a tool result of megabytes streams past
 * without being held or parsed twice.
 */
export function watchRequests(found: (id: unknown) => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let line = "";
  let isLineDropped = false;
  let afterCarriageReturn = false;
  let data = "";
  let isEventSkipped = false;
  let isRequest: boolean | undefined;

  const endEvent = () => {
    if (!isEventSkipped && data) {
      isRequest ??= CLIENT_BOUND.test(data.slice(0, HEAD_CHARS));
      if (isRequest) {
        try {
          const message = JSON.parse(data) as { id?: unknown; method?: unknown };
          if (typeof message.method === "string" && message.id !== undefined) found(message.id);
        } catch {}
      }
    }
    data = "";
    isEventSkipped = false;
    isRequest = undefined;
  };
  const skipEvent = () => {
    isEventSkipped = true;
    isLineDropped = true;
    line = "";
    data = "";
  };
  /** The current line grew: stop keeping what cannot be (part of) a request. */
  const checkLine = () => {
    if (line.length < 5 || isEventSkipped) return;
    if (!line.startsWith("data:")) {
      isLineDropped = true;
      line = "";
      return;
    }
    const size = data.length + line.length;
    if (isRequest === undefined && size > HEAD_CHARS + 8) {
      isRequest = CLIENT_BOUND.test(`${data}${data ? "\n" : ""}${content(line)}`.slice(0, HEAD_CHARS));
      if (!isRequest) skipEvent();
    } else if (isRequest && size > MAX_REQUEST_CHARS) {
      skipEvent();
    }
  };
  const endLine = () => {
    if (!isLineDropped) {
      if (line === "") endEvent();
      else if (line.startsWith("data:") && !isEventSkipped) data += `${data ? "\n" : ""}${content(line)}`;
    }
    line = "";
    isLineDropped = false;
  };
  const feed = (text: string) => {
    let at = 0;
    if (afterCarriageReturn && text.startsWith("\n")) at = 1; // a CRLF split across chunks
    afterCarriageReturn = false;
    // The next \n and \r, each searched again only once passed: no rescanning of a long text.
    let lf = text.indexOf("\n", at);
    let cr = text.indexOf("\r", at);
    while (at < text.length) {
      if (lf >= 0 && lf < at) lf = text.indexOf("\n", at);
      if (cr >= 0 && cr < at) cr = text.indexOf("\r", at);
      const newline = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
      const end = newline < 0 ? text.length : newline;
      if (!isLineDropped) {
        line += text.slice(at, end);
        checkLine();
      }
      if (newline < 0) break;
      endLine();
      if (text[newline] === "\r") {
        if (newline + 1 === text.length) afterCarriageReturn = true;
        else if (text[newline + 1] === "\n") at = newline + 2;
        else at = newline + 1;
        if (newline + 1 === text.length) break;
        continue;
      }
      at = newline + 1;
    }
  };
  return new TransformStream({
    transform(chunk, controller) {
      feed(decoder.decode(chunk, { stream: true }));
      controller.enqueue(chunk);
    },
    flush() {
      feed(decoder.decode());
    },
  });
}

const content = (dataLine: string) => dataLine.slice(dataLine.startsWith("data: ") ? 6 : 5);
