import {
  type ClientCapabilities,
  CreateMessageResultSchema,
  CreateMessageResultWithToolsSchema,
  ElicitResultSchema,
  ErrorCode,
  ListRootsResultSchema,
  McpError,
  type Result,
  type Root,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../log.ts";
import type { ClientBoundRequest } from "../upstream/upstream-connection.ts";
import type { ClientSide } from "../upstream/upstream-pool.ts";
import { type ClientSessions, passesLevel } from "./client-sessions.ts";
import { federatedUri } from "./federated-names.ts";

/**
 * Where an upstream's messages to "the client" go (the pool hands them over with the session of
 * the newest call in flight to that server, if any):
 *  - sampling, elicitation and roots requests made while serving a call go to the session that
 *    made the call, on the call's own stream; the answer goes back to the upstream. Outside any
 *    call, roots/list is answered with the server's configured `roots` when it has some, and
 *    everything else goes to the session that connected or called last. A client without the
 *    capability gets the upstream a clear error instead of a request it cannot answer;
 *  - log messages go to the calling session, or outside a call to every session that asked for
 *    them with logging/setLevel, named `<server>` or `<server>/<logger>`;
 *  - resource updates go to the sessions subscribed to that resource, under its federated URI;
 *  - resource and prompt list changes go to every session.
 */
export interface UpstreamMessageOptions {
  sessions: ClientSessions;
  logger: Logger;
  /** The `roots` a server is configured with, if any. */
  rootsOf(server: string): readonly Root[] | undefined;
  /** How long a relayed request may wait for the client (a person may be answering it). */
  relayTimeoutMs: number;
}

export function upstreamMessages(options: UpstreamMessageOptions): ClientSide {
  const { sessions } = options;
  return {
    async request(server, request, caller, signal) {
      const call = caller ? sessions.call(caller) : undefined;
      if (!call && request.method === "roots/list") {
        const roots = options.rootsOf(server);
        if (roots) return { roots: [...roots] };
      }
      const session = call?.session ?? sessions.mostRecent();
      if (!session) {
        throw new McpError(
          ErrorCode.InvalidRequest,
          `no client is connected to mcpproxy to answer ${request.method} from ${server}`,
        );
      }
      const missing = missingCapability(session.server.getClientCapabilities(), request);
      if (missing) {
        const client = session.server.getClientVersion()?.name ?? "the client";
        throw new McpError(
          ErrorCode.InvalidRequest,
          `${client}, connected to mcpproxy, does not support ${missing}, so ${request.method} from ${server} cannot be answered`,
        );
      }
      const schema = resultSchemaOf(request);
      const requestOptions = { signal, timeout: options.relayTimeoutMs };
      const started = performance.now();
      const result = call
        ? await call.sendRequest(request, schema, requestOptions)
        : await session.server.request(request, schema, requestOptions);
      options.logger.child(server).debug(`relayed ${request.method}`, {
        session: session.id,
        ms: Math.round(performance.now() - started),
      });
      return result as Result;
    },

    notification(server, notification, caller) {
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
          const call = caller ? sessions.call(caller) : undefined;
          if (call) {
            if (passesLevel(params.level, call.session.level)) send(call.sendNotification(named));
            return;
          }
          for (const session of sessions.all()) {
            if (session.level && passesLevel(params.level, session.level))
              send(session.server.notification(named));
          }
          return;
        }
        case "notifications/resources/updated": {
          const uri = federatedUri(server, notification.params.uri);
          for (const session of sessions.all()) {
            if (session.subscriptions.has(uri)) send(session.server.sendResourceUpdated({ uri }));
          }
          return;
        }
        case "notifications/resources/list_changed":
          for (const session of sessions.all()) send(session.server.sendResourceListChanged());
          return;
        case "notifications/prompts/list_changed":
          for (const session of sessions.all()) send(session.server.sendPromptListChanged());
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

function resultSchemaOf(request: ClientBoundRequest) {
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
