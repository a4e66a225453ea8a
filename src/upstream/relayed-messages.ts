import type { Client, Result, ServerNotification, ServerRequest } from "@modelcontextprotocol/client";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/client";
import type { CallTags } from "./call-tags.ts";

/**
 * What a server sends towards its client that the proxy relays to its own clients: the requests
 * (sampling, elicitation, roots) and the notifications (log messages, resource updates, resource and
 * prompt list changes), handed from each connection's SDK client to the handlers its owner gave
 * (relay-routing.ts decides which session gets them). Without a request handler (index, doctor:
 * no agent to ask) a request is refused as a method not found.
 */

/** The requests a server may send its client that the proxy relays to its own clients. */
export type ClientBoundRequest = Extract<
  ServerRequest,
  { method: "sampling/createMessage" | "elicitation/create" | "roots/list" }
>;
export type RelayedNotification = Extract<
  ServerNotification,
  {
    method:
      | "notifications/message"
      | "notifications/resources/updated"
      | "notifications/resources/list_changed"
      | "notifications/prompts/list_changed";
  }
>;

/** Whom a connection tells what its server sends towards the client (upstream-connection.ts's ConnectOptions). */
export interface RelayHandlers {
  /**
   * A request the server sends to the client (sampling, elicitation, roots): relayed by the proxy;
   * `tag` names the call it belongs to when the wire tells (call-tags.ts).
   */
  onRequest?: (request: ClientBoundRequest, signal: AbortSignal, tag: string | undefined) => Promise<Result>;
  /** A log message, a resource update or a resource or prompt list change from the server. */
  onNotification?: (notification: RelayedNotification) => void;
}

/** Hands what `client`'s server sends towards the client to `handlers`, each request with its call's tag. */
export function relayBetween(client: Client, handlers: RelayHandlers, tags: CallTags): void {
  for (const method of ["sampling/createMessage", "elicitation/create", "roots/list"] as const) {
    client.setRequestHandler(method, (request, ctx) => {
      if (!handlers.onRequest) {
        throw new ProtocolError(
          ProtocolErrorCode.MethodNotFound,
          `${request.method} is relayed to the agent's client by \`mcpproxy serve\` only`,
        );
      }
      const tag = tags.callOf(request, ctx.mcpReq.id);
      return handlers.onRequest(request as ClientBoundRequest, ctx.mcpReq.signal, tag) as never;
    });
  }
  for (const method of [
    "notifications/message",
    "notifications/resources/updated",
    "notifications/resources/list_changed",
    "notifications/prompts/list_changed",
  ] as const) {
    client.setNotificationHandler(method, (notification) => {
      handlers.onNotification?.(notification as RelayedNotification);
    });
  }
}
