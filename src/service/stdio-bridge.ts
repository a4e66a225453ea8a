import { createJsonLineSplitter, idOfTruncatedMessage } from "../json-line-splitter.ts";
import type { Logger } from "../log.ts";
import { createProgressGap } from "../progress-gap.ts";
import { createBridgeSession } from "./bridge-session.ts";
import {
  envelopeVersion,
  errorAnswer,
  isNotification,
  isRequest,
  isResponse,
  type JsonRpcMessage,
  parseMessage,
  unreachableMessage,
  WENT_AWAY,
} from "./bridge-wire.ts";
import { createServiceChannel, keyOf } from "./service-channel.ts";
import { type ServiceLink, waitForService } from "./service-link.ts";
import { isRunning } from "./service-process.ts";

/**
 * The stdio bridge: what `mcpproxy serve` becomes when the background service of its data dir runs.
 * It is a transport, not a second server: each line the client writes is sent to the service's
 * streamable HTTP endpoint as that client would send it, and every message the service sends back
 * (answers, progress, logging, list changes, a server's sampling and elicitation requests) is
 * written to the client. The client's session is a session of the service, so its dynamic tools,
 * relays and limits are the service's, kept apart from every other client's as over HTTP.
 *
 * Both revisions pass through: a request carrying the 2026-07-28 envelope goes statelessly with the
 * headers it needs (bridge-wire.ts), its cancellation closes its stream; a 2025 session is opened by
 * the client's `initialize`, carries its Mcp-Session-Id, and has a GET stream for what the service
 * sends outside a request.
 *
 * The service may restart under it (an upgrade, a crash): a request that cannot reach it waits for
 * it a while (`reconnectMs`), a call cut short is answered with an error (it may or may not have
 * run; it is never retried), and a 2025 session that the new service does not know is opened again
 * with the client's own `initialize`, the client told that its tool list changed. A 2026 listen
 * stream is opened again as it was. When stdin ends, the bridge ends its session and nothing else.
 */
export interface BridgeOptions {
  link: ServiceLink;
  logger: Logger;
  /** The largest line the client may write, in bytes (maxRequestBytes). */
  maxLineBytes: number;
  /** How long a message waits for the service to come back before it is answered with an error. */
  reconnectMs?: number;
}

interface InFlight {
  controller: AbortController;
  /** A 2026-07-28 request: cancelled by closing its stream. */
  isModern: boolean;
  /** The client cancelled it: no answer is owed. */
  isCancelled: boolean;
}

const RECONNECT_MS = 30_000;
/**
 * How long after a listen stream ended its service is asked whether it still serves: one that stops
 * ends its streams as it closes its listener, which is shut a moment later.
 */
const STOPPING_MS = 250;

/** Whether the service that served a stream, `pid`, still runs and answers a moment later. */
async function isStillServing(link: ServiceLink, pid: number | undefined): Promise<boolean> {
  await Bun.sleep(STOPPING_MS);
  return pid !== undefined && isRunning(pid) && (await link.isAnswering());
}

export async function runBridge(options: BridgeOptions): Promise<void> {
  const { link, logger } = options;
  const reconnectMs = options.reconnectMs ?? RECONNECT_MS;
  // Bun's own stdout writer and stdin stream, as the stdio server's (stdio-transport.ts): Node's
  // stream machinery cost more than the messages it carried.
  const output = Bun.stdout.writer();
  const progressGap = createProgressGap();
  const writeNow = (message: JsonRpcMessage) => {
    output.write(`${JSON.stringify(message)}\n`);
    void output.flush();
  };
  // A response is held a moment after a progress notice, so that the client reads the notice.
  const write = (message: JsonRpcMessage) => {
    const wait = progressGap.waitBefore(message);
    if (wait > 0) setTimeout(() => writeNow(message), wait);
    else writeNow(message);
  };
  const inFlight = new Map<string, InFlight>();
  let isClosing = false;
  const channel = createServiceChannel({ link, logger, reconnectMs, session: () => session });
  const session = createBridgeSession({
    ...{ channel, link, logger, reconnectMs, write },
    isClosing: () => isClosing,
  });

  const forwardRequest = async (message: JsonRpcMessage) => {
    const id = message.id;
    const key = keyOf(id);
    const isModern = envelopeVersion(message) !== undefined;
    const entry: InFlight = { controller: new AbortController(), isModern, isCancelled: false };
    inFlight.set(key, entry);
    const isListen = message.method === "subscriptions/listen";
    const isSearch =
      !isModern && (message.params as { name?: unknown } | undefined)?.name === "retrieve_tools";
    const sink = (answer: JsonRpcMessage) => {
      if (isSearch && isResponse(answer) && keyOf(answer.id) === key) session.keepSearch(message, answer);
      write(answer);
    };
    try {
      if (!isModern && message.method === "initialize") {
        await session.open(message, entry.controller.signal, write);
        return;
      }
      for (let attempt = 0; ; attempt++) {
        // A session lost to a restart (and one that could not be opened again then) is opened again first.
        if (!isModern && session.hasOpened && (session.reopening || !session.id)) await session.reopen();
        let response: Response;
        try {
          response = await channel.post(message, entry.controller.signal);
        } catch (error) {
          if (!entry.isCancelled && !isClosing) write(errorAnswer(id, unreachableMessage(error)));
          return;
        }
        // A session the service does not know: it restarted. Open it again; the request never ran.
        if (!isModern && response.status === 404 && session.hasOpened && attempt === 0) {
          await response.body?.cancel();
          await session.reopen();
          continue;
        }
        if (isListen) {
          if (await listenThrough(response, id, entry)) continue;
          return;
        }
        let isAnswered = false;
        try {
          isAnswered = await channel.relay(response, id, sink);
        } catch {
          // The stream broke: the service went away while it answered.
        }
        if (!isAnswered && !entry.isCancelled && !isClosing) write(errorAnswer(id, WENT_AWAY));
        return;
      }
    } finally {
      inFlight.delete(key);
    }
  };

  /**
   * A 2026 listen stream, passed on until it ends. One that ends without the client asking (the
   * service stopped: it ends every stream with the empty answer, or it was killed and the stream
   * broke) is opened again, as it was, once a restarted service answers; true then. If none does
   * within reconnectMs, the client gets the end the service gave, or the error.
   */
  const listenThrough = async (response: Response, id: unknown, entry: InFlight): Promise<boolean> => {
    const servedBy = link.pid();
    let ended: JsonRpcMessage | undefined;
    try {
      await channel.relay(response, id, (message) => {
        if (isResponse(message) && keyOf(message.id) === keyOf(id)) ended = message;
        else write(message);
      });
    } catch {
      // The stream broke: the service went away.
    }
    if (entry.isCancelled || isClosing) return false;
    // Ended by a service that goes on serving: it meant it, and the client is told at once.
    if (ended && (await isStillServing(link, servedBy))) {
      write(ended);
      return false;
    }
    if (await waitForService(link, reconnectMs, entry.controller.signal, servedBy)) return true;
    write(ended ?? errorAnswer(id, WENT_AWAY));
    return false;
  };

  const forwardOther = async (message: JsonRpcMessage) => {
    if (message.method === "notifications/cancelled") {
      const params = message.params as { requestId?: unknown } | undefined;
      const entry = inFlight.get(keyOf(params?.requestId));
      if (entry) entry.isCancelled = true;
      // A 2026 request is cancelled by closing its stream; a session's is told, as the client said it.
      if (entry?.isModern) {
        entry.controller.abort();
        return;
      }
    }
    if (session.reopening) await session.reopening;
    if (!session.id) {
      logger.debug(`dropped a ${String(message.method ?? "response")} sent outside a session`);
      return;
    }
    const response = await channel.post(message, AbortSignal.timeout(reconnectMs)).catch((error: unknown) => {
      logger.warn(`could not pass a message to the mcpproxy service: ${unreachableMessage(error)}`);
      return undefined;
    });
    await response?.body?.cancel();
    if (message.method === "notifications/initialized") session.startListening();
  };

  const onLine = (text: string) => {
    const messages = parseMessage(text);
    if (!messages) {
      write(errorAnswer(null, "Parse error: the line is not JSON", -32700));
      return;
    }
    for (const message of messages) {
      if (isRequest(message)) void forwardRequest(message);
      else if (isNotification(message) || isResponse(message)) void forwardOther(message);
    }
  };

  const splitter = createJsonLineSplitter(options.maxLineBytes, onLine, (line) =>
    write(
      errorAnswer(
        idOfTruncatedMessage(line.head, line.tail) ?? null,
        `Request refused: the message of ${line.bytes} bytes is over maxRequestBytes (${options.maxLineBytes})`,
        -32600,
      ),
    ),
  );
  for await (const chunk of Bun.stdin.stream()) splitter.push(chunk);
  isClosing = true;
  session.stop();
  for (const entry of inFlight.values()) entry.controller.abort();
  // The client left: its session ends, and nothing else of the service.
  const url = link.url();
  if (session.id && url)
    await fetch(url, {
      method: "DELETE",
      headers: channel.headersFor(undefined, true),
      signal: AbortSignal.timeout(2_000),
    }).catch(() => undefined);
}
