import type { Server } from "@modelcontextprotocol/server";
import type { Logger } from "../../log.ts";
import type { ClientSessions } from "../transport/client-sessions.ts";

/**
 * Where changes to what the proxy federates go, in both eras: a prompt or resource list change to
 * every legacy session and every listen stream that asked for that kind; a resource update (under
 * its federated URI) to the legacy sessions subscribed to it and the listen streams whose
 * `resourceSubscriptions` name it. A 2026-07-28 client hears of changes only on a
 * `subscriptions/listen` stream; the SDK's entries hold those streams and filter by what each
 * asked for (createMcpHandler's `notify` over HTTP, the pinned server's `send…` over stdio), so
 * each entry attaches itself here.
 *
 * Tools: the proxy's own list changes when retrieve_tools' description does (servers come and go;
 * app/description-watch.ts), so `toolsChanged` goes to every legacy session and every listen stream
 * that asked for tools; legacy sessions in dynamic routing also hear of their own tools from
 * session-routing.ts. In passthrough and in `all` routing the tool list is the catalog's: its
 * changes go the same way (app/all-tools-watch.ts for `all`).
 */
export interface ChangeNotifier {
  toolsChanged(): void;
  promptsChanged(): void;
  resourcesChanged(): void;
  resourceUpdated(uri: string): void;
}

export interface ChangeFeed extends ChangeNotifier {
  /** Adds a modern entry's way to its listen streams; returns the function that takes it away. */
  attach(notifier: ChangeNotifier): () => void;
}

export function createChangeFeed(sessions: ClientSessions, logger: Logger): ChangeFeed {
  const attached = new Set<ChangeNotifier>();
  const sent = (what: string, promise: Promise<void>) =>
    void promise.catch((error: unknown) => logger.debug(`${what} not sent: ${String(error)}`));
  const each = (send: (notifier: ChangeNotifier) => void) => {
    for (const notifier of attached) {
      try {
        send(notifier);
      } catch (error) {
        logger.debug(`a listen stream's notifier failed: ${String(error)}`);
      }
    }
  };
  return {
    attach(notifier) {
      attached.add(notifier);
      return () => void attached.delete(notifier);
    },
    toolsChanged() {
      for (const session of sessions.all()) sent("tools/list_changed", session.server.sendToolListChanged());
      each((notifier) => notifier.toolsChanged());
    },
    promptsChanged() {
      for (const session of sessions.all())
        sent("prompts/list_changed", session.server.sendPromptListChanged());
      each((notifier) => notifier.promptsChanged());
    },
    resourcesChanged() {
      for (const session of sessions.all())
        sent("resources/list_changed", session.server.sendResourceListChanged());
      each((notifier) => notifier.resourcesChanged());
    },
    resourceUpdated(uri) {
      for (const session of sessions.all()) {
        if (session.subscriptions.has(uri))
          sent("resources/updated", session.server.sendResourceUpdated({ uri }));
      }
      each((notifier) => notifier.resourceUpdated(uri));
    },
  };
}

/**
 * A 2026-07-28 stdio connection's pinned server as a notifier: serveStdio puts what it sends on
 * the connection's listen streams that asked for it, and drops it when none did.
 */
export function serverNotifier(server: Server, logger: Logger): ChangeNotifier {
  const sent = (promise: Promise<void>) =>
    void promise.catch((error: unknown) => logger.debug(`listen notification not sent: ${String(error)}`));
  return {
    toolsChanged: () => sent(server.sendToolListChanged()),
    promptsChanged: () => sent(server.sendPromptListChanged()),
    resourcesChanged: () => sent(server.sendResourceListChanged()),
    resourceUpdated: (uri) => sent(server.sendResourceUpdated({ uri })),
  };
}
