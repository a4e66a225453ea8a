import {
  CreateMessageResultSchema,
  CreateMessageResultWithToolsSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
} from "@modelcontextprotocol/core";
import type { ClientCapabilities, Result } from "@modelcontextprotocol/server";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { Logger } from "../../log.ts";
import type { ClientSide } from "../../upstream/relay-routing.ts";
import type { ClientBoundRequest } from "../../upstream/relayed-messages.ts";
import { type ClientSessions, passesLevel } from "../transport/client-sessions.ts";
import type { ChangeNotifier } from "./change-feed.ts";
import { FEDERATED_NAMING, type Naming } from "./federated-names.ts";

/**
 * Where an upstream's messages to "the client" go, once relay-routing.ts decided whom they belong to:
 *  - sampling, elicitation and roots requests go to the session of the call they belong to, on
 *    the call's own stream, and the answer goes back to the upstream (a 2026-07-28 caller, which
 *    has no session, gets them as the input_required answer to its own call: parked-calls.ts);
 *    outside any call (allowed by
 *    the server's `relayOutsideCalls`) to the latest still open session that called the server. A
 *    client without the capability gets the upstream a clear error instead of a request it cannot
 *    answer. A server that is held for approval (`isHeld`) gets every request refused;
 *  - log messages go to the calling session, outside calls to every session that asked for them
 *    with logging/setLevel, named `<server>` or `<server>/<logger>`; one that may belong to any of
 *    several sessions' calls goes to none (the proxy's log has it at debug level). A 2026-07-28
 *    call gets them on its own stream at or above the level its request named, and none without;
 *  - resource updates go, under their federated URI, to the sessions and listen streams subscribed
 *    to that resource; resource and prompt list changes to every session and every listen stream
 *    that asked for them (change-feed.ts).
 */
export interface UpstreamMessageOptions {
  sessions: ClientSessions;
  /** Where list changes and resource updates go, in both eras. */
  changes: ChangeNotifier;
  logger: Logger;
  /** How long a relayed request may wait for the client (a person may be answering it). */
  relayTimeoutMs: number;
  /** Why a server may not reach clients at all (it is held for approval), or undefined. */
  isHeld?: ((server: string) => string | undefined) | undefined;
  /** How resource URIs are shown to clients (default: federated). */
  naming?: Naming | undefined;
}

export function upstreamMessages(options: UpstreamMessageOptions): ClientSide {
  const { sessions } = options;
  return {
    async request(server, request, to, signal) {
      const held = options.isHeld?.(server);
      if (held)
        throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `${request.method} refused: ${held}`);
      // A caller without a session is asked by an input round of its own call (parked-calls.ts).
      if ("ask" in to) return to.ask(request, signal);
      const call = "caller" in to ? sessions.call(to.caller) : undefined;
      const session =
        call?.session ??
        ("sessions" in to
          ? [...to.sessions]
              .reverse()
              .map((id) => sessions.byId(id))
              .find(Boolean)
          : undefined);
      if (!session) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          "caller" in to
            ? `the call ${request.method} from ${server} belongs to has ended`
            : `no session that called ${server} is still connected to answer ${request.method}`,
        );
      }
      const missing = missingCapability(session.server.getClientCapabilities(), request);
      if (missing) {
        const client = session.server.getClientVersion()?.name ?? "the client";
        throw new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `${client}, connected to mcpproxy, does not support ${missing}, so ${request.method} from ${server} cannot be answered`,
        );
      }
      const schema = resultSchemaOf(request);
      const requestOptions = { signal, timeout: options.relayTimeoutMs };
      const started = performance.now();
      const result = call
        ? await call.send(request, schema, requestOptions)
        : await session.server.request(request, schema, requestOptions);
      options.logger.child(server).debug(`relayed ${request.method}`, {
        session: session.id,
        ms: Math.round(performance.now() - started),
      });
      return result as Result;
    },

    notification(server, notification, to) {
      if (options.isHeld?.(server)) return;
      const send = (promise: Promise<void>) =>
        void promise.catch((error) =>
          options.logger
            .child(server)
            .debug(`relaying ${notification.method} failed`, { error: String(error) }),
        );
      switch (notification.method) {
        case "notifications/message": {
          const { params } = notification;
          const named = {
            method: notification.method,
            params: { ...params, logger: params.logger ? `${server}/${params.logger}` : server },
          };
          if (to === "unknown-call") {
            options.logger
              .child(server)
              .debug("a log message during calls of several sessions, relayed to none", {
                level: params.level,
              });
            return;
          }
          if (typeof to === "object" && "log" in to) {
            if (passesLevel(params.level, to.log.level)) send(to.log.send(named));
            return;
          }
          const call = typeof to === "object" ? sessions.call(to.caller) : undefined;
          if (call) {
            if (passesLevel(params.level, call.session.level)) send(call.notify(named));
            return;
          }
          if (typeof to === "object") return; // its call ended meanwhile
          for (const session of sessions.all()) {
            if (session.level && passesLevel(params.level, session.level))
              send(session.server.notification(named));
          }
          return;
        }
        case "notifications/resources/updated":
          options.changes.resourceUpdated(
            (options.naming ?? FEDERATED_NAMING).uri(server, notification.params.uri),
          );
          return;
        case "notifications/resources/list_changed":
          options.changes.resourcesChanged();
          return;
        case "notifications/prompts/list_changed":
          options.changes.promptsChanged();
          return;
        default:
          return unhandled(notification);
      }
    },
  };
}

function unhandled(notification: never): void {
  void notification;
}

export function resultSchemaOf(request: ClientBoundRequest) {
  switch (request.method) {
    case "sampling/createMessage":
      return request.params.tools ? CreateMessageResultWithToolsSchema : CreateMessageResultSchema;
    case "elicitation/create":
      return ElicitResultSchema;
    case "roots/list":
      return ListRootsResultSchema;
  }
}

/** What the client would need to answer `request`, when it did not declare it. */
export function missingCapability(
  capabilities: ClientCapabilities | undefined,
  request: ClientBoundRequest,
): string | undefined {
  switch (request.method) {
    case "sampling/createMessage":
      if (!capabilities?.sampling) return "sampling";
      return request.params.tools && !capabilities.sampling.tools ? "sampling with tools" : undefined;
    case "elicitation/create": {
      const elicitation = capabilities?.elicitation;
      if (!elicitation) return "elicitation";
      if (request.params.mode === "url") return elicitation.url ? undefined : "URL elicitation";
      // An empty `elicitation: {}` is form mode (the spec's compatibility rule).
      return elicitation.form || !elicitation.url ? undefined : "form elicitation";
    }
    case "roots/list":
      return capabilities?.roots ? undefined : "roots";
  }
}
