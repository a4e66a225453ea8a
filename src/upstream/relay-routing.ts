import type { Result } from "@modelcontextprotocol/client";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/parse-server.ts";
import type { ActiveCall, AskClient, CallLog } from "./forward-call.ts";
import type { ClientBoundRequest, RelayedNotification } from "./relayed-messages.ts";

/**
 * Which session a server's request to "the client" (sampling, elicitation, roots) reaches: only the
 * session whose call caused it, identified from the request itself (call-tags.ts), never from
 * which call is newest. Where nothing on the wire ties it to a call, it goes to the one session
 * with calls in flight on that server, and is refused when there are several rather than guessed.
 * Outside any call it is refused, unless the server's config opts in (`relayOutsideCalls`): then it
 * goes to a session that has called that server. `roots/list` outside a call gets the server's
 * configured `roots` when it has some. Every relay, of every transport, is decided here.
 * A call of a client without a session (a 2026-07-28 request) asks by input rounds: its request
 * goes back to that client inside the answer to its own call (parked-calls.ts), never elsewhere.
 */
type RelayTarget =
  /** The call in flight it belongs to (its key in the client sessions). */
  | { caller: string }
  /** The call in flight it belongs to, of a client without a session: asked by an input round. */
  | { ask: AskClient }
  /** Outside any call, with `relayOutsideCalls`: the sessions that called the server, latest last. */
  | { sessions: readonly string[] };

/**
 * Where a server's log message goes: a call's session, a 2026-07-28 call's own stream (at its
 * level), every interested session (outside calls), or none.
 */
export type NoticeTarget = { caller: string } | { log: CallLog } | "outside-calls" | "unknown-call";

/** The proxy's client sessions, as the relays reach them (server/federation/upstream-messages.ts). */
export interface ClientSide {
  request(server: string, request: ClientBoundRequest, to: RelayTarget, signal: AbortSignal): Promise<Result>;
  notification(server: string, notification: RelayedNotification, to: NoticeTarget): void;
}

/** A server as its relays see it: its config, its calls in flight, the sessions that called it. */
export interface RelaySource {
  readonly config: ServerConfig;
  readonly active: readonly ActiveCall[];
  readonly callers: readonly string[];
}

/** The handlers an upstream connection calls with what its server sends towards the client. */
export function relayTo(clientSide: ClientSide, source: RelaySource) {
  const server = () => source.config.name;
  return {
    onRequest: (
      request: ClientBoundRequest,
      signal: AbortSignal,
      tag: string | undefined,
    ): Promise<Result> => {
      const call = callOf(source, tag);
      if (call === "ambiguous") {
        throw refused(
          `${server()} sent ${request.method} while calls of several sessions were in flight on it, and nothing ` +
            "in the request says which call it belongs to; mcpproxy refuses it rather than send it to the wrong session",
        );
      }
      if (call === "ended") throw refused(`${server()} sent ${request.method} for a call that has ended`);
      if (call?.askClient) {
        const ask = call.askClient;
        return call.waitOnClient(() => clientSide.request(server(), request, { ask }, signal));
      }
      if (call && call.caller === undefined) {
        throw refused(
          `${server()} sent ${request.method} during a call whose client has no session to receive it ` +
            "(a 2026-07-28 request); mcpproxy refuses it rather than send it to another client",
        );
      }
      if (call)
        return call.waitOnClient(() =>
          clientSide.request(server(), request, { caller: call.caller! }, signal),
        );
      if (request.method === "roots/list" && source.config.roots) {
        return Promise.resolve({ roots: [...source.config.roots] });
      }
      if (!source.config.relayOutsideCalls) {
        throw refused(
          `${server()} sent ${request.method} outside any call; mcpproxy relays it only during a call to ${server()} ` +
            `(the user may allow it with "relayOutsideCalls": true in its config)`,
        );
      }
      if (source.callers.length === 0) {
        throw refused(`${server()} sent ${request.method}, and no session has called ${server()} yet`);
      }
      return clientSide.request(server(), request, { sessions: source.callers }, signal);
    },
    onNotification: (notification: RelayedNotification) => {
      const call = callOf(source, undefined);
      clientSide.notification(
        server(),
        notification,
        call === "ambiguous" || call === "ended"
          ? "unknown-call"
          : call && call.caller === undefined
            ? call.log
              ? { log: call.log }
              : "unknown-call"
            : call
              ? { caller: call.caller! }
              : "outside-calls",
      );
    },
  };
}

/**
 * The call a message belongs to: the one its tag names (`ended` when that call is over: a late
 * request is no one else's); else, when the calls in flight are all one session's, that session's
 * newest; `ambiguous` when they are several sessions'; undefined when none is in flight. A call
 * without a client session (a 2026-07-28 request) counts as a session of its own, so what it causes
 * is never taken for another client's.
 */
function callOf(
  source: RelaySource,
  tag: string | undefined,
): ActiveCall | "ambiguous" | "ended" | undefined {
  const calls = source.active;
  if (tag !== undefined) return calls.find((call) => call.tag === tag) ?? "ended";
  if (calls.length === 0) return undefined;
  // A call without a session (a 2026-07-28 request) is its own: two of them are two callers, and
  // two 2026 clients' calls are never taken for one session's.
  const sessions = new Set(calls.map((call) => call.session ?? call.tag));
  return sessions.size === 1 ? calls.at(-1) : "ambiguous";
}

function refused(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidRequest, message);
}

/** How many sessions a server remembers as its callers (for `relayOutsideCalls`). */
const CALLERS_KEPT = 16;

/** `callers` with `session` moved to the end (the latest), bounded. */
export function withCaller(callers: readonly string[], session: string): string[] {
  return [...callers.filter((other) => other !== session), session].slice(-CALLERS_KEPT);
}
