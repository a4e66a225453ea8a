import type {
  CallToolResult,
  InputRequiredResult,
  Progress,
  ServerContext,
} from "@modelcontextprotocol/server";
import type { CallOptions } from "../upstream/upstream-pool.ts";
import type { ClientSession, ClientSessions } from "./client-sessions.ts";
import { capabilitiesOf } from "./input-rounds.ts";

/** A forwarded call's options, and the way its result goes back once its progress is sent. */
export type ForwardOptions = CallOptions & {
  flushed<R extends CallToolResult | InputRequiredResult | object>(result: R): Promise<R>;
};

/**
 * What a forwarded call carries from the client's request: its cancellation, and where the
 * upstream's progress goes (to the client, under the client's own token, when it asked for it).
 * `flushed` holds the result back until every progress notice is sent: a notice that arrives after
 * its result is dropped by the client.
 */
export function callOptionsFor(
  progressToken: string | number | undefined,
  extra: ServerContext,
  clients: { session: ClientSession; sessions: ClientSessions } | undefined,
): ForwardOptions {
  const sending: Promise<unknown>[] = [];
  // Named to the pool, so what the upstream asks the client while it serves this call comes here.
  const caller = clients?.sessions.beginCall(clients.session, extra);
  // A 2026 server is told what this caller can answer: the request's envelope, or the session's.
  const clientCapabilities = capabilitiesOf(extra, clients?.session.server.getClientCapabilities());
  return {
    signal: extra.mcpReq.signal,
    ...(clientCapabilities ? { clientCapabilities } : {}),
    ...(caller && clients ? { caller, session: clients.session.id } : {}),
    ...(progressToken !== undefined
      ? {
          onprogress: (progress: Progress) =>
            void sending.push(
              extra.mcpReq
                .notify({
                  method: "notifications/progress",
                  params: { ...progress, progressToken },
                })
                .catch(() => undefined),
            ),
        }
      : {}),
    async flushed(result) {
      if (caller) clients?.sessions.endCall(caller);
      await Promise.all(sending);
      return result;
    },
  };
}
