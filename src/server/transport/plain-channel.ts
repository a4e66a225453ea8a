import type {
  JSONRPCMessage,
  RequestId,
  Transport,
  TransportSendOptions,
} from "@modelcontextprotocol/server";
import { isPlainResponse } from "../../upstream/modern-wire.ts";
import { isPlainRequest } from "../plain-dispatch.ts";

/**
 * serveStdio hands each connection's server a channel (the SDK's StdioConnectionChannel) that
 * counts the requests its server has not answered yet (a probe server is discarded only once they
 * are): it asks its guard schemas of every message it delivers whether it is a request, and of
 * every message it sends whether it is a response. A plain request (plain-dispatch.ts) and a plain
 * result (modern-wire.ts), which those guards take as a request and as a response, are counted
 * without asking them; every other message goes the channel's own way. The rest is the channel's
 * code: a closed channel delivers and sends nothing. What a channel sends passes its outbound
 * intercept on the way, which on a modern connection puts change notifications on its listen
 * streams and, asking its guard whether the message is a notification, lets anything else by: a
 * response goes past it. The channel's internals named here are the SDK's (pinned exactly);
 * plain-channel.test.ts fails if they are not there, or if the intercept would take a response.
 */
interface ChannelInternals {
  _closed: boolean;
  _pendingRequests: Set<RequestId>;
  _settle(id: RequestId): void;
  _wire: Transport;
  deliver(message: JSONRPCMessage, extra?: unknown): void;
  onmessage?: ((message: JSONRPCMessage, extra?: never) => void) | undefined;
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void>;
}

/** Whether `transport` is serveStdio's channel, as this module knows it. */
function isChannel(transport: Transport): transport is Transport & ChannelInternals {
  const channel = transport as Partial<ChannelInternals>;
  return (
    typeof channel.deliver === "function" &&
    typeof channel._settle === "function" &&
    typeof channel._closed === "boolean" &&
    channel._pendingRequests instanceof Set &&
    typeof channel._wire?.send === "function"
  );
}

/** Counts the plain messages on serveStdio's channel without its guards; false if `transport` is not one. */
export function countPlainMessages(transport: Transport): boolean {
  if (!isChannel(transport)) return false;
  const channel = transport;
  const deliver = channel.deliver.bind(channel);
  const send = channel.send.bind(channel);
  channel.deliver = (message, extra) => {
    if (channel._closed || !isPlainRequest(message)) {
      deliver(message, extra);
      return;
    }
    channel._pendingRequests.add((message as { id: RequestId }).id);
    channel.onmessage?.(message, extra as never);
  };
  channel.send = async (message, options) => {
    if (!isPlainResponse(message)) return send(message, options);
    channel._settle((message as { id: RequestId }).id);
    if (channel._closed) return;
    return channel._wire.send(message, options);
  };
  return true;
}
