import type { JSONRPCMessage, Server } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import type { Logger } from "../../log.ts";
import { plainLaneOf } from "../calls/plain-lane.ts";
import type { ClientEra } from "../client-era.ts";
import { type ChangeFeed, serverNotifier } from "../federation/change-feed.ts";
import { type ListenAdmission, stdioListens } from "./listen-admission.ts";
import { createPinnedDelivery } from "./pinned-delivery.ts";
import { countPlainMessages } from "./plain-channel.ts";
import { LineStdioServerTransport } from "./stdio-transport.ts";

/**
 * Serves MCP over this process's stdin/stdout, in whichever revision the client opens with: a
 * 2026-07-28 request (its `_meta` names the version) pins the connection to the modern era, an
 * `initialize` to the legacy one (the SDK's serveStdio decides, and builds one server for the
 * connection from `createServer`; a probe that falls back gets a throw-away one). `closed` settles
 * when the client goes away (stdin ends), which is how stdio clients say goodbye.
 *
 * A modern connection's `subscriptions/listen` streams are served by serveStdio from what its
 * pinned server sends; that server is attached to `changes` while it lives, and each stream's
 * resource subscriptions are held through `listens` until it ends. `close()` ends every stream
 * gracefully (the empty answer to its request) before the connection. Once the connection is
 * pinned, a plain request reaches its server past the entry's queue and guards (pinned-delivery.ts).
 */
export interface StdioHandle {
  closed: Promise<void>;
  close(): Promise<void>;
}

export interface StdioServerOptions {
  maxRequestBytes: number;
  logger: Logger;
  /** Told the method of each request as it arrives (serve starts its upstreams on the first that needs them). */
  onRequest?: ((method: string) => void) | undefined;
  changes?: ChangeFeed | undefined;
  listens?: ListenAdmission | undefined;
}

/** Open listen streams one stdio client may hold (each is a filter kept in memory). */
export const MAX_STDIO_LISTENS = 32;

export function startStdioServer(
  createServer: (era: ClientEra) => Server,
  options: StdioServerOptions,
): StdioHandle {
  const listens = options.listens ? stdioListens(options.listens) : undefined;
  const pinned = createPinnedDelivery();
  /** Each channel's server, so that the pinned one's plain lane can take what it serves whole. */
  const serverOf = new WeakMap<object, Server>();
  const send = (message: JSONRPCMessage) => transport.send(message);
  const transport = new LineStdioServerTransport({
    maxRequestBytes: options.maxRequestBytes,
    onRequest: options.onRequest,
    onMessage: listens?.inbound,
    onSend: listens?.outbound,
    claim: (message) => {
      const channel = pinned.pinnedChannel();
      const server = channel && serverOf.get(channel);
      if (server && plainLaneOf(server)?.claim(message, send)) return true;
      return pinned.claim(message);
    },
  });
  void transport.closed.then(() => listens?.close());
  const handle = serveStdio(
    ({ era }) => {
      const server = createServer(era);
      const connect = server.connect.bind(server);
      server.connect = (channel) => {
        serverOf.set(channel, server);
        countPlainMessages(channel);
        pinned.watch(channel);
        return connect(channel);
      };
      if (era === "modern" && options.changes) {
        const detach = options.changes.attach(serverNotifier(server, options.logger));
        const previous = server.onclose;
        server.onclose = () => {
          detach();
          previous?.();
        };
      }
      return server;
    },
    {
      transport,
      legacy: "serve",
      maxSubscriptions: MAX_STDIO_LISTENS,
      onerror: (error) => options.logger.debug(`stdio: ${error.message}`),
    },
  );
  return {
    closed: transport.closed,
    async close() {
      pinned.stop();
      await handle.close().catch(() => undefined);
      await transport.close();
      listens?.close();
    },
  };
}
