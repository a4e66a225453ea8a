import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCResponse,
  PROTOCOL_VERSION_META_KEY,
  type Transport,
} from "@modelcontextprotocol/client";
import {
  acceptableCallResult,
  acceptableModernResult,
  LENIENT_METHODS,
  type ModernResultOptions,
} from "./lenient-results.ts";

/**
 * What the proxy changes on the wire of a connection to an upstream, at the transport (below the
 * SDK, where call-tags.ts also works), for the 2026-07-28 era:
 *  - Capabilities per request. A 2026 request carries the client's capabilities in its `_meta`
 *    envelope; the SDK fills in the connection's, which are the proxy's relays (sampling,
 *    elicitation, roots). A modern upstream is told none unless the request names some under
 *    CAPABILITIES_META_KEY: the downstream caller's (forwarded per request), or the union for the
 *    tool listing (servers that list some tools only to capable clients). A 2025 upstream keeps
 *    the connection's, declared once at initialize.
 *  - Lenient results: the responses to a modern request for a list or a call are made acceptable
 *    to the SDK's strict checks before it decodes them (lenient-results.ts); a 2025 server's call
 *    results get the same content rule, which the proxy's own server needs to send them on.
 *  - Order (both eras): a response never overtakes a notification read before it (below).
 *  - Claims (both eras): the response to a call sent past the SDK's request machinery
 *    (lean-call.ts) goes to the call, not to the SDK, once it is one the SDK would take as a
 *    response; anything else reaches the SDK as before.
 */
export const CAPABILITIES_META_KEY = "io.mcpproxy/clientCapabilities";

/**
 * What the proxy declares to a 2025-era upstream at initialize: it relays sampling, elicitation
 * (form and URL) and roots to the client that made the call. Declared by `index` too, whose
 * handlers refuse: servers such as server-everything list some tools only to clients with these
 * capabilities, and the index must hold the tools that `serve` offers. A 2026 upstream gets them
 * per request instead (its tool listing asks with these, the union of what callers may have).
 */
export const CLIENT_CAPABILITIES: ClientCapabilities = {
  sampling: {},
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true },
};

/** Requests in flight whose answer is made lenient: id → method. Bounded (a cancelled one is never answered). */
const MAX_PENDING = 10_000;

type OnMessage = NonNullable<Transport["onmessage"]>;

/** Where the responses to the calls lean-call.ts sends go. */
export interface WireClaims {
  /** The response whose id is `id` (matched by its numeric value, as the SDK matches) goes to `onResponse`. */
  claim(id: number, onResponse: (response: JSONRPCResponse) => void): void;
  release(id: number): void;
  /** What the transport's send does to a message first, for one sent past it (plain-http-post.ts). */
  outgoing(message: JSONRPCMessage): JSONRPCMessage;
}

export function watchModernWire(transport: Transport, options: ModernResultOptions): WireClaims {
  const pending = new Map<string, string>();
  const claims = new Map<number, (response: JSONRPCResponse) => void>();
  /** The claim a response answers, if the SDK would take it as a response (its own guards decide where ours cannot). */
  const claimOf = (message: JSONRPCMessage) => {
    const claimant = claims.get(Number((message as { id?: unknown }).id));
    if (!claimant) return undefined;
    return isPlainResponse(message) || isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)
      ? (claimed: JSONRPCMessage) => claimant(claimed as JSONRPCResponse)
      : undefined;
  };

  const send = transport.send.bind(transport);
  transport.send = (message, sendOptions) => send(outgoing(message, pending), sendOptions);

  // The SDK (and its era probe) sets onmessage, possibly more than once; whatever it sets is
  // reached through a wrapper that fixes the answers first. A handler read back and set again
  // (the probe saves and restores them) is unwrapped, so wrappers never nest.
  let inner: OnMessage | undefined;
  const wrappers = new WeakMap<OnMessage, OnMessage>();
  const unwrapped = new WeakMap<OnMessage, OnMessage>();
  // The SDK runs a notification's handler a microtask later, but settles a response at once, and
  // with it forgets the request's progress handler: a progress notice read in the same chunk as
  // its result (a server's last one, nearly always over stdio) was dropped as "unknown token".
  // A response that follows a notification in the same turn waits one microtask, behind it.
  let isNoticeQueued = false;
  const deliver = (handler: OnMessage, message: JSONRPCMessage, extra: Parameters<OnMessage>[1]) => {
    const fixed = incoming(message, pending, options);
    if (!("method" in fixed)) {
      const claimant = claims.size > 0 ? claimOf(fixed) : undefined;
      if (claimant) {
        if (isNoticeQueued) queueMicrotask(() => claimant(fixed));
        else claimant(fixed);
      } else if (isNoticeQueued) queueMicrotask(() => handler(fixed, extra));
      else handler(fixed, extra);
      return;
    }
    if (!("id" in fixed) && !isNoticeQueued) {
      isNoticeQueued = true;
      queueMicrotask(() => {
        isNoticeQueued = false;
      });
    }
    handler(fixed, extra);
  };
  const wrap = (handler: OnMessage): OnMessage => {
    let wrapper = wrappers.get(handler);
    if (!wrapper) {
      wrapper = ((message, extra) => deliver(handler, message, extra)) as OnMessage;
      wrappers.set(handler, wrapper);
      unwrapped.set(wrapper, handler);
    }
    return wrapper;
  };
  inner = transport.onmessage;
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    enumerable: true,
    get: () => (inner ? wrap(inner) : undefined),
    set: (handler: OnMessage | undefined) => {
      inner = handler ? (unwrapped.get(handler) ?? handler) : undefined;
    },
  });
  return {
    claim: (id, onResponse) => void claims.set(id, onResponse),
    release: (id) => void claims.delete(id),
    outgoing: (message) => outgoing(message, pending),
  };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * A result response the SDK's guard takes (`{jsonrpc: "2.0", id, result}`, nothing else; an id
 * that is a string or a safe integer; a result object whose `_meta`, if any, is an object), told
 * without its schema. Where this says no, the SDK's guards are asked.
 */
export function isPlainResponse(message: JSONRPCMessage): boolean {
  const { jsonrpc, id, result } = message as { jsonrpc?: unknown; id?: unknown; result?: unknown };
  if (jsonrpc !== "2.0" || !(typeof id === "string" || Number.isSafeInteger(id))) return false;
  if (!isObject(result) || (result._meta !== undefined && !isObject(result._meta))) return false;
  const keys = Object.keys(message);
  return keys.length === 3 && keys.includes("result");
}

function outgoing(message: JSONRPCMessage, pending: Map<string, string>): JSONRPCMessage {
  if (!("method" in message)) return message;
  const params = message.params as { _meta?: Record<string, unknown> } | undefined;
  const meta = params?._meta;
  const isModern = meta !== undefined && Object.hasOwn(meta, PROTOCOL_VERSION_META_KEY);
  // A call's content is made passable in either era (lenient-results.ts); the rest in 2026 only.
  if ("id" in message && (isModern ? LENIENT_METHODS.has(message.method) : message.method === "tools/call")) {
    if (pending.size >= MAX_PENDING) pending.delete(pending.keys().next().value as string);
    pending.set(String(message.id), message.method);
  }
  if (!meta) return message;
  if (!isModern && !Object.hasOwn(meta, CAPABILITIES_META_KEY)) return message;
  const { [CAPABILITIES_META_KEY]: asked, ...rest } = meta;
  if (isModern) rest[CLIENT_CAPABILITIES_META_KEY] = asked ?? {};
  const { _meta: _, ...others } = params!;
  return {
    ...message,
    params: Object.keys(rest).length > 0 ? { ...others, _meta: rest } : others,
  } as JSONRPCMessage;
}

function incoming(
  message: JSONRPCMessage,
  pending: Map<string, string>,
  options: ModernResultOptions,
): JSONRPCMessage {
  if (pending.size === 0 || "method" in message || !("id" in message)) return message;
  const key = String(message.id);
  const method = pending.get(key);
  if (method === undefined) return message;
  pending.delete(key);
  if (!("result" in message)) return message;
  const result =
    method === "tools/call"
      ? acceptableCallResult(message.result)
      : acceptableModernResult(method, message.result, options);
  return result === message.result ? message : ({ ...message, result } as JSONRPCMessage);
}
