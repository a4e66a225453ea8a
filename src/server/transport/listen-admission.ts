import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import { describeError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import type { UpstreamPool } from "../../upstream/upstream-pool.ts";
import { MAX_SUBSCRIBED_URIS } from "../../upstream/upstream-subscriptions.ts";
import { FEDERATED_NAMING, type Naming } from "../federation/federated-names.ts";
import type { ResourceSubscriptions } from "../federation/resource-subscriptions.ts";

/**
 * What the proxy does with a 2026-07-28 `subscriptions/listen` request before the SDK's entry
 * serves it (the entry acknowledges, filters and closes the stream, but cannot tell the proxy which
 * resources a stream wants): the request's `resourceSubscriptions` are narrowed to the URIs the
 * proxy can honour, so the acknowledgement names exactly those, and each is held in the shared
 * resource subscriptions (its server subscribed) until the stream ends. A URI is left out when it
 * is not one of this proxy's (`mcpproxy://<server>/…`, federated-names.ts), its server is not configured or is held
 * for approval (nothing of it is offered), or its server is connected and does not take
 * subscriptions. At most MAX_LISTEN_URIS are kept per stream: the bound the pool keeps on one
 * server's subscriptions (upstream-subscriptions.ts), so one stream may fill it but not more.
 */
const MAX_LISTEN_URIS = MAX_SUBSCRIBED_URIS;

export interface ListenAdmissionOptions {
  subscriptions: ResourceSubscriptions;
  pool: Pick<UpstreamPool, "status" | "live">;
  /** Why a server is held for approval (it offers nothing), or undefined. */
  serverHold(server: string): string | undefined;
  logger: Logger;
  /** How the URIs clients hold name the server's own (default: federated). */
  naming?: Naming | undefined;
}

interface AdmittedListen {
  /** The request to serve in its place. */
  message: JSONRPCMessage;
  /** Its stream ended (closed, cancelled, refused): what it held is let go. Idempotent. */
  release(): void;
}

export interface ListenAdmission {
  admit(request: JSONRPCMessage, holder: string): AdmittedListen;
}

export function isListenRequest(message: unknown): message is JSONRPCMessage & { id: string | number } {
  const m = message as { method?: unknown; id?: unknown } | null;
  return m?.method === "subscriptions/listen" && (typeof m.id === "string" || typeof m.id === "number");
}

export function createListenAdmission(options: ListenAdmissionOptions): ListenAdmission {
  const { pool, logger } = options;
  /** Why the proxy cannot deliver updates of `uri`, or undefined when it can. */
  const refusal = (uri: string): string | undefined => {
    const owner = (options.naming ?? FEDERATED_NAMING).fromUri(uri);
    if (!owner) return "not a resource URI of this proxy";
    if (!pool.status().some((status) => status.name === owner.server)) return "no such server";
    const hold = options.serverHold(owner.server);
    if (hold) return hold;
    const live = pool.live().find(({ server }) => server === owner.server);
    if (live && !live.connection.client.getServerCapabilities()?.resources?.subscribe)
      return `${owner.server} does not take resource subscriptions`;
    return undefined;
  };

  return {
    admit(request, holder) {
      const params = (request as { params?: Record<string, unknown> }).params;
      const notifications = params?.notifications as Record<string, unknown> | undefined;
      const wanted = notifications?.resourceSubscriptions;
      // Anything malformed goes to the SDK as it came, for its -32602.
      if (!Array.isArray(wanted) || !wanted.every((uri) => typeof uri === "string"))
        return { message: request, release: () => {} };
      const kept: string[] = [];
      for (const uri of new Set(wanted as string[])) {
        const why = refusal(uri);
        if (why) logger.debug(`listen: not honouring ${uri}: ${why}`);
        else if (kept.length < MAX_LISTEN_URIS) kept.push(uri);
      }
      // A refusal is the server's to give and the client's to live with (the acknowledgement went
      // out already): at debug level, as a client could ask for a thousand at a time.
      for (const uri of kept) {
        options.subscriptions
          .add(holder, uri)
          .catch((error: unknown) =>
            logger.debug(`listen: subscribing to ${uri} failed; no updates of it: ${describeError(error)}`),
          );
      }
      let isReleased = false;
      return {
        message: {
          ...request,
          params: { ...params, notifications: { ...notifications, resourceSubscriptions: kept } },
        } as JSONRPCMessage,
        release() {
          if (isReleased) return;
          isReleased = true;
          options.subscriptions.release(holder);
        },
      };
    },
  };
}

/**
 * The listen streams of one stdio connection, as its messages go by: a stream starts with its
 * request and ends with the answer to it (the SDK's refusal, or its graceful close), the client's
 * `notifications/cancelled` for it, or the end of the connection.
 */
export function stdioListens(admission: ListenAdmission) {
  const open = new Map<string, () => void>();
  const keyOf = (id: unknown) => `${typeof id}:${String(id)}`;
  const end = (id: unknown) => {
    const key = keyOf(id);
    open.get(key)?.();
    open.delete(key);
  };
  return {
    inbound(message: JSONRPCMessage): JSONRPCMessage {
      const m = message as { method?: unknown; id?: unknown; params?: { requestId?: unknown } };
      if (m.method === "notifications/cancelled" && m.id === undefined) {
        end(m.params?.requestId);
        return message;
      }
      if (!isListenRequest(message)) return message;
      end(message.id); // a new stream under the id of an old one replaces it
      const admitted = admission.admit(message, `stdio-listen:${keyOf(message.id)}`);
      open.set(keyOf(message.id), admitted.release);
      return admitted.message;
    },
    outbound(message: JSONRPCMessage): void {
      const m = message as { method?: unknown; id?: unknown };
      if (m.id !== undefined && m.method === undefined) end(m.id);
    },
    close(): void {
      for (const release of open.values()) release();
      open.clear();
    },
  };
}
