import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { isPlainRequest } from "../plain-dispatch.ts";

/**
 * serveStdio's entry sees every message of a connection before the connection's server does: in
 * one queue, one message at a time, and on a connection pinned to the 2026 era it asks its guard
 * schemas of each one whether it is a request (twice: is it an `initialize` it must refuse, is it a
 * `subscriptions/listen` it serves itself) before it hands it to the pinned server's channel. Once
 * the connection is pinned, a plain request (plain-dispatch.ts, which the guards take as a request)
 * whose method is neither of those, nor `server/discover`, is handed to the channel at once, as the
 * entry would hand it; every other message, and every message before the connection is pinned,
 * goes the entry's way. The channel's `deliver` and `_closed` are the SDK's (pinned exactly);
 * pinned-delivery.test.ts holds what a client gets with this to what it gets without it.
 *
 * When a connection is pinned is read from what the entry hands its channel: a modern probe
 * server is handed `server/discover` requests (and notifications) alone until the connection is
 * pinned to it or it is discarded; a connection's server is handed any other request only once it
 * is the pinned one, for good. A request taken here may pass a message still in the entry's queue
 * (a listen being answered, a notification): requests are answered independently, and a
 * cancellation only ever follows the request it names.
 */
export interface PinnedDelivery {
  /** Follows a connection's channel (after plain-channel.ts has wrapped its `deliver`). */
  watch(channel: Transport): void;
  /** Hands `message` to the pinned channel if it may; false leaves it to the entry. */
  claim(message: JSONRPCMessage): boolean;
  /** The channel the connection is pinned to, while it may take messages (not closed, not stopped). */
  pinnedChannel(): Transport | undefined;
  /** From now on every message goes the entry's way (the connection is closing). */
  stop(): void;
}

interface ChannelInternals {
  _closed: boolean;
  deliver(message: JSONRPCMessage, extra?: unknown): void;
}

/** Requests the entry answers or inspects itself, whatever the phase. */
const ENTRY_METHODS: ReadonlySet<string> = new Set(["initialize", "subscriptions/listen", "server/discover"]);

export function createPinnedDelivery(): PinnedDelivery {
  let pinned: ChannelInternals | undefined;
  let pinnedTransport: Transport | undefined;
  let deliverPinned: ((message: JSONRPCMessage) => void) | undefined;
  let isStopped = false;
  return {
    watch(transport) {
      const channel = transport as Transport & Partial<ChannelInternals>;
      if (typeof channel.deliver !== "function" || typeof channel._closed !== "boolean") return;
      const deliver = channel.deliver.bind(channel);
      channel.deliver = (message, extra) => {
        if (
          pinned !== channel &&
          "id" in message &&
          "method" in message &&
          message.method !== "server/discover"
        ) {
          pinned = channel as ChannelInternals;
          pinnedTransport = channel;
          deliverPinned = deliver;
        }
        deliver(message, extra);
      };
    },
    claim(message) {
      if (isStopped || !pinned || pinned._closed || !deliverPinned) return false;
      if (!isPlainRequest(message) || ENTRY_METHODS.has((message as { method: string }).method)) return false;
      deliverPinned(message);
      return true;
    },
    pinnedChannel() {
      return isStopped || !pinned || pinned._closed ? undefined : pinnedTransport;
    },
    stop() {
      isStopped = true;
    },
  };
}
