import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/client";
import { describeError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { UpstreamConnection } from "./upstream-connection.ts";

/**
 * The resources one server is subscribed to for the proxy's clients (the server's own URIs), kept
 * with the server rather than with a connection, so that a reconnect keeps them: a 2025 server's
 * new session is sent `resources/subscribe` for each again (`restore`); a 2026-07-28 server, which
 * has no resources/subscribe, gets them as the `resourceSubscriptions` of its listen stream
 * (upstream-listen.ts), opened again with each change and on each connect. Who holds which URI is
 * server/federation/resource-subscriptions.ts's business: this sees one subscribe per URI and one unsubscribe
 * when its last holder goes.
 * At most MAX_SUBSCRIBED_URIS per server: an agent cannot grow the set (nor a 2026 server's listen
 * request, which carries the whole set) without limit.
 */
export const MAX_SUBSCRIBED_URIS = 1000;

export type SubscriptionMethod = "resources/subscribe" | "resources/unsubscribe";

/** Sends a 2025 server the request on `connection`, as the pool sends any other. */
export type SendSubscription = (
  connection: UpstreamConnection,
  method: SubscriptionMethod,
  uri: string,
) => Promise<unknown>;

export interface UpstreamSubscriptions {
  /** The server's own URIs wanted now. */
  uris(): readonly string[];
  /** Subscribes (or unsubscribes) `uri` on the server; rejects with why not, the set unchanged then. */
  change(connection: UpstreamConnection, method: SubscriptionMethod, uri: string): Promise<void>;
  /** A new connection: a 2025 server's session is subscribed again to every URI (one it refuses is dropped). */
  restore(connection: UpstreamConnection): void;
}

export function createUpstreamSubscriptions(
  server: string,
  send: SendSubscription,
  /** The pool's: the server's own child is made when there is something to say (a pool makes one of these per server). */
  logger: Logger,
): UpstreamSubscriptions {
  const wanted = new Set<string>();

  const roomFor = (uri: string) => {
    if (wanted.has(uri) || wanted.size < MAX_SUBSCRIBED_URIS) return;
    throw new ProtocolError(
      ProtocolErrorCode.InvalidRequest,
      `${server} already has ${MAX_SUBSCRIBED_URIS} resource subscriptions, the most the proxy keeps for one server; ` +
        "unsubscribe from some first",
    );
  };

  /** A 2026 server: the listen stream is opened again with the set as it is now. */
  const relisten = async (connection: UpstreamConnection, uri: string, isAdded: boolean) => {
    const honoured = await connection.relisten();
    if (isAdded && !honoured?.resourceSubscriptions?.includes(uri)) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `${server} did not accept a subscription to ${uri} (its listen stream left it out)`,
      );
    }
  };

  return {
    uris: () => [...wanted],

    async change(connection, method, uri) {
      const isModern = connection.era === "modern";
      if (method === "resources/unsubscribe") {
        wanted.delete(uri);
        await (isModern ? relisten(connection, uri, false) : send(connection, method, uri));
        return;
      }
      if (isModern && !connection.client.getServerCapabilities()?.resources?.subscribe) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `${server} does not take resource subscriptions`,
        );
      }
      roomFor(uri);
      if (!isModern) {
        await send(connection, method, uri);
        wanted.add(uri);
        return;
      }
      if (wanted.has(uri)) return;
      wanted.add(uri);
      try {
        await relisten(connection, uri, true);
      } catch (error) {
        wanted.delete(uri);
        throw error;
      }
    },

    restore(connection) {
      if (connection.era === "modern" || wanted.size === 0) return;
      for (const uri of wanted) {
        send(connection, "resources/subscribe", uri).catch((error: unknown) => {
          wanted.delete(uri);
          logger
            .child(server)
            .warn(
              `subscribing again to ${uri} after reconnecting failed; no updates of it: ${describeError(error)}`,
            );
        });
      }
    },
  };
}
