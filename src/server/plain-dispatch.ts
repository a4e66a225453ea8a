import type { JSONRPCMessage, Server, Transport } from "@modelcontextprotocol/server";
import { PROTOCOL_VERSION_META_KEY } from "@modelcontextprotocol/server";

/**
 * A client's plain request handed straight to the Server's request dispatch. On every message the
 * SDK's Protocol asks its guard schemas in turn whether it is a result, an error, a request or a
 * notification; a request fails the first two (each building its errors) before the third passes
 * it. A request whose shape says at a glance what the guards would say (`isPlainRequest`) goes to
 * `_onrequest` at once, the Protocol's own dispatch for what its guards take as a request; every
 * other message goes through the guards as before. src/server/plain-dispatch.test.ts holds the
 * glance to the guards' answers. The Server's internals named here are the SDK's seams for its role
 * classes (the SDK is pinned exactly).
 */

const RELATED_TASK = "io.modelcontextprotocol/related-task";

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * A message the SDK's guards take as a request and as nothing else: `{jsonrpc: "2.0", id, method,
 * params?}` and no other key; an id that is a string or a safe integer; params, if any, an object
 * whose `_meta`, if any, is an object whose progress token, if any, is a string or a safe integer.
 */
export function isPlainRequest(message: unknown): boolean {
  if (!isObject(message) || message.jsonrpc !== "2.0" || typeof message.method !== "string") return false;
  const { id, params } = message;
  if (!(typeof id === "string" || Number.isSafeInteger(id))) return false;
  const keys = Object.keys(message).length;
  if (params === undefined) return keys === 3 && Object.hasOwn(message, "id");
  if (keys !== 4 || !isObject(params)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  if (!isObject(meta) || Object.hasOwn(meta, RELATED_TASK)) return false;
  const token = meta.progressToken;
  return token === undefined || typeof token === "string" || Number.isSafeInteger(token);
}

/**
 * A POST body the SDK's entry classifies as not 2025 (`isLegacyRequest` false), told at a glance: a
 * plain request (above) other than `initialize` whose `_meta` claims a protocol version. The entry
 * classifies such a request as 2026-07-28, or refuses its envelope; it is never a 2025 one. The
 * HTTP app asks this first, so that a 2026 request is classified once (by the handler it goes to),
 * not twice; anything else is the SDK's to classify. plain-dispatch.test.ts holds the glance to
 * `isLegacyRequest`.
 */
export function isPlainModernRequest(message: unknown): boolean {
  if (!isPlainRequest(message)) return false;
  const { method, params } = message as { method: string; params?: { _meta?: object } };
  return method !== "initialize" && params?._meta !== undefined && PROTOCOL_VERSION_META_KEY in params._meta;
}

interface ServerInternals {
  _onrequest(message: JSONRPCMessage, extra: unknown): void;
}

/** Every transport `server` connects to hands it plain requests past the guards. */
export function dispatchPlainRequests(server: Server): void {
  const connect = server.connect.bind(server);
  server.connect = async (transport: Transport) => {
    // The SDK's handler calls one that was set before it; then it is left to do so.
    const before = transport.onmessage;
    const start = transport.start.bind(transport);
    transport.start = () => {
      const guarded = transport.onmessage;
      if (!before && guarded) {
        const internals = server as unknown as ServerInternals;
        transport.onmessage = (message, extra) => {
          if (isPlainRequest(message)) internals._onrequest(message, extra);
          else guarded(message, extra);
        };
      }
      return start();
    };
    return connect(transport);
  };
}
