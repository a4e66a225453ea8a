import type { LoggingLevel, Server, ServerContext } from "@modelcontextprotocol/server";
import type { ResourceSubscriptions } from "../federation/resource-subscriptions.ts";

/**
 * Every client session of the proxy (one MCP `Server` each, stdio or HTTP), so that what an
 * upstream sends towards "the client" reaches the right one: a request or log message made while
 * serving a call goes to the session that made the call, on that call's own stream; a resource
 * update to the sessions that subscribed to it; a list change to all (change-feed.ts).
 */
export interface ClientSession {
  readonly id: string;
  readonly server: Server;
  /** Set by `logging/setLevel`: log messages below it are not sent to this session. */
  level?: LoggingLevel | undefined;
  /** Federated URIs this session subscribed to (held in `ClientSessions.subscriptions` under the session's id). */
  readonly subscriptions: Set<string>;
}

type Extra = ServerContext;

/** A tools/call in flight: its session, and the call's own way to send to the client. */
interface CallContext {
  session: ClientSession;
  send: Extra["mcpReq"]["send"];
  notify: Extra["mcpReq"]["notify"];
}

export interface ClientSessions {
  /** Registers a session until its server closes. */
  open(server: Server): ClientSession;
  /** Marks a call in flight; the returned key names it to the upstream pool (`CallOptions.caller`). */
  beginCall(session: ClientSession, extra: Extra): string;
  /**
   * As `beginCall`, for a call the SDK's Server never saw (the plain lane). Over stdio, where a
   * request has no stream of its own, what it causes is sent on the session itself; over HTTP
   * (`relatedRequestId`, the client's id of the call) on the call's own response stream, as the
   * SDK sends what a handler causes (http-lane.ts carries it there).
   */
  beginSessionCall(session: ClientSession, relatedRequestId?: string | number): string;
  endCall(key: string): void;
  call(key: string): CallContext | undefined;
  /** An open session by its id. */
  byId(id: string): ClientSession | undefined;
  all(): ClientSession[];
  /** The most verbose level any session asked for (`logging/setLevel`), forwarded upstream. */
  mostVerboseLevel(): LoggingLevel | undefined;
  /** The upstream subscriptions, shared with listen streams; a closed session's are released. */
  readonly subscriptions: ResourceSubscriptions;
}

/** RFC 5424 order, as MCP uses it: debug is the most verbose. */
export const LOG_LEVELS: readonly LoggingLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

/** Whether a message at `level` passes a session's threshold (none set: everything passes). */
export function passesLevel(level: LoggingLevel, threshold: LoggingLevel | undefined): boolean {
  return threshold === undefined || LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold);
}

export function createClientSessions(subscriptions: ResourceSubscriptions): ClientSessions {
  const sessions = new Map<string, ClientSession>();
  const calls = new Map<string, CallContext>();
  /** A session's own way to send, made once for all its calls that the SDK's Server never saw. */
  const sessionContexts = new WeakMap<ClientSession, CallContext>();
  let counter = 0;
  return {
    open(server) {
      const session: ClientSession = {
        // Whole: relays find a session by its id, and two sessions must never share one.
        id: crypto.randomUUID(),
        server,
        subscriptions: new Set(),
      };
      sessions.set(session.id, session);
      const previous = server.onclose;
      server.onclose = () => {
        sessions.delete(session.id);
        subscriptions.release(session.id);
        previous?.();
      };
      return session;
    },
    beginCall(session, extra) {
      const key = `${session.id}:${++counter}`;
      calls.set(key, { session, send: extra.mcpReq.send, notify: extra.mcpReq.notify });
      return key;
    },
    beginSessionCall(session, relatedRequestId) {
      const key = `${session.id}:${++counter}`;
      if (relatedRequestId !== undefined) {
        const { server } = session;
        const options = { relatedRequestId };
        calls.set(key, {
          session,
          send: ((request: never, schema: never, asked: object | undefined) =>
            server.request(request, schema, {
              ...asked,
              ...options,
            } as never)) as unknown as Extra["mcpReq"]["send"],
          notify: (notification) => server.notification(notification, options),
        });
        return key;
      }
      let context = sessionContexts.get(session);
      if (!context) {
        const { server } = session;
        context = {
          session,
          // Relays pass a result schema (upstream-messages.ts): the Server's request takes the same.
          send: ((request: never, schema: never, options: never) =>
            server.request(request, schema, options)) as unknown as Extra["mcpReq"]["send"],
          notify: (notification) => server.notification(notification),
        };
        sessionContexts.set(session, context);
      }
      calls.set(key, context);
      return key;
    },
    endCall: (key) => void calls.delete(key),
    call: (key) => calls.get(key),
    byId: (id) => sessions.get(id),
    subscriptions,
    all: () => [...sessions.values()],
    mostVerboseLevel() {
      let most: LoggingLevel | undefined;
      for (const { level } of sessions.values()) {
        if (level && (!most || LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(most))) most = level;
      }
      return most;
    },
  };
}
