import type {
  CallToolResult,
  InputRequiredResult,
  LoggingLevel,
  Progress,
  ServerContext,
} from "@modelcontextprotocol/server";
import { LOG_LEVEL_META_KEY } from "@modelcontextprotocol/server";
import type { CallOptions } from "../../upstream/forward-call.ts";
import { spanOf } from "../observe/request-spans.ts";
import { type ClientSession, type ClientSessions, LOG_LEVELS } from "../transport/client-sessions.ts";
import { callerOf } from "../transport/resource-guard.ts";
import { capabilitiesOf } from "./input-rounds.ts";

/** A forwarded call's options, and the way its result goes back once its progress is sent. */
export type ForwardOptions = CallOptions & {
  flushed<R extends CallToolResult | InputRequiredResult | object>(result: R): Promise<R>;
};

/**
 * What a forwarded call carries from the client's request: its cancellation, where the upstream's
 * progress goes (to the client, under the client's own token, when it asked for it), and its log
 * level, which a 2026 server is told with the call (it has no session to remember one): a 2026
 * request's `_meta` logLevel (the server's log messages at or above it come back on the request's
 * own stream; without one, none do), or a 2025 session's `logging/setLevel` level (its messages go
 * to the session, filtered by that level: upstream-messages.ts). A 2025 session that never set a
 * level asks for everything (debug), as it gets every log message of its calls from a 2025 server.
 * `flushed` holds the result back until every progress notice is sent: a notice that arrives after
 * its result is dropped by the client.
 */
export function callOptionsFor(
  progressToken: string | number | undefined,
  extra: ServerContext,
  clients: { session: ClientSession; sessions: ClientSessions } | undefined,
): ForwardOptions {
  const sending: Promise<unknown>[] = [];
  /** A notification on the request's own stream, awaited by `flushed` before the result goes. */
  const notify = (notification: Parameters<ServerContext["mcpReq"]["notify"]>[0]) => {
    const sent = extra.mcpReq.notify(notification).catch(() => undefined);
    sending.push(sent);
    return sent;
  };
  // Named to the pool, so what the upstream asks the client while it serves this call comes here.
  const caller = clients?.sessions.beginCall(clients.session, extra);
  // A 2026 server is told what this caller can answer: the request's envelope, or the session's.
  const clientCapabilities = capabilitiesOf(extra, clients?.session.server.getClientCapabilities());
  const level = clients ? (clients.session.level ?? "debug") : requestLogLevel(extra);
  const span = spanOf(extra);
  const principal = callerOf(extra);
  // Set one by one rather than spread from parts: this is made for every call.
  const options: ForwardOptions = {
    signal: extra.mcpReq.signal,
    async flushed(result) {
      if (caller) clients?.sessions.endCall(caller);
      if (sending.length > 0) await Promise.all(sending);
      return result;
    },
  };
  if (span) options.span = span;
  if (principal) options.principal = principal;
  if (clientCapabilities) options.clientCapabilities = clientCapabilities;
  if (caller && clients) {
    options.caller = caller;
    options.session = clients.session.id;
  }
  if (level) options.log = { level, send: notify };
  if (progressToken !== undefined) {
    options.onprogress = (progress: Progress) =>
      void notify({ method: "notifications/progress", params: { ...progress, progressToken } });
  }
  return options;
}

/** The log level a 2026-07-28 request named in its `_meta`. */
function requestLogLevel(extra: ServerContext): LoggingLevel | undefined {
  const level = (extra.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY];
  return LOG_LEVELS.includes(level as LoggingLevel) ? (level as LoggingLevel) : undefined;
}
