import type { Logger } from "../log.ts";
import {
  envelopeVersion,
  errorAnswer,
  isRequest,
  isResponse,
  isUnreachable,
  type JsonRpcMessage,
  modernHeaders,
  parseMessage,
  sseMessages,
} from "./bridge-wire.ts";
import { type ServiceLink, waitForService } from "./service-link.ts";

/**
 * How the bridge talks to the service: each message POSTed to its streamable HTTP endpoint with the
 * token and the headers the message's revision asks for, and what comes back passed on message by
 * message (one JSON body, or an SSE stream of progress, log messages, a server's requests and the
 * answer).
 */
export interface ServiceChannel {
  /** POSTs a message; a service that is not there is waited for (up to reconnectMs), once. */
  post(message: JsonRpcMessage, signal: AbortSignal, inSession?: boolean): Promise<Response>;
  /** Passes on what a response carries to `sink`; true when it held the answer to `id`. */
  relay(response: Response, id: unknown, sink: (message: JsonRpcMessage) => void): Promise<boolean>;
  /** The headers of a message (a 2026 request's own; else the session's). */
  headersFor(message: JsonRpcMessage | undefined, inSession: boolean): Record<string, string>;
}

export interface ChannelOptions {
  link: ServiceLink;
  logger: Logger;
  reconnectMs: number;
  /** The 2025 session's id and protocol revision, once it is open. */
  session: () => { id?: string | undefined; version?: string | undefined };
}

export const keyOf = (id: unknown) => JSON.stringify(id);

export function createServiceChannel(options: ChannelOptions): ServiceChannel {
  const { link, logger, reconnectMs } = options;
  const headersFor = (message: JsonRpcMessage | undefined, inSession: boolean) => {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${link.token()}`,
    };
    const modern = message && isRequest(message) ? envelopeVersion(message) : undefined;
    if (message && modern) return { ...headers, ...modernHeaders(message, modern) };
    const session = options.session();
    if (inSession && session.id) headers["mcp-session-id"] = session.id;
    if (inSession && session.version) headers["mcp-protocol-version"] = session.version;
    return headers;
  };
  return {
    headersFor,
    async post(message, signal, inSession = true) {
      let hasWaited = false;
      for (;;) {
        const url = link.url();
        try {
          if (!url) throw new Error("no service runs for this data dir");
          return await fetch(url, {
            method: "POST",
            headers: headersFor(message, inSession),
            body: JSON.stringify(message),
            signal,
          });
        } catch (error) {
          if (signal.aborted || hasWaited || !isUnreachable(error, url)) throw error;
          hasWaited = true;
          logger.info(`the mcpproxy service does not answer; waiting up to ${reconnectMs / 1000} s for it`);
          if (!(await waitForService(link, reconnectMs, signal))) throw error;
        }
      }
    },
    async relay(response, id, sink) {
      let isAnswered = false;
      const seen = (message: JsonRpcMessage) => {
        if (isResponse(message) && keyOf(message.id) === keyOf(id)) isAnswered = true;
        sink(message);
      };
      const type = response.headers.get("content-type") ?? "";
      if (type.includes("text/event-stream") && response.body) {
        for await (const message of sseMessages(response.body)) seen(message);
        return isAnswered;
      }
      const text = type.includes("application/json") ? await response.text() : "";
      if (!type.includes("application/json")) await response.body?.cancel();
      // An HTTP error's JSON-RPC body may name no id (the service could not tell it): it is this one's.
      for (const message of parseMessage(text) ?? [])
        seen(isResponse(message) && message.id === null && id !== undefined ? { ...message, id } : message);
      if (!isAnswered && id !== undefined && !response.ok)
        seen(
          errorAnswer(
            id,
            `The mcpproxy service refused the request (HTTP ${response.status})${text ? `: ${text.slice(0, 300)}` : ""}`,
          ),
        );
      return isAnswered;
    },
  };
}
