import type { Logger } from "../log.ts";
import {
  envelopeVersion,
  errorAnswer,
  isNotification,
  isRequest,
  isResponse,
  type JsonRpcMessage,
  modernHeaders,
  parseMessage,
  sseMessages,
} from "./bridge-wire.ts";
import { type ServiceLink, waitForService } from "./service-link.ts";

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
  input?: AsyncIterable<Uint8Array>;
  write?: (line: string) => void;
}

interface InFlight {
  controller: AbortController;
  /** A 2026-07-28 request: cancelled by closing its stream. */
  isModern: boolean;
  /** The client cancelled it: no answer is owed. */
  isCancelled: boolean;
}

const RECONNECT_MS = 30_000;
/** The searches kept to register a session's dynamic tools again after a restart (the latest last). */
const SEARCHES_KEPT = 16;

export async function runBridge(options: BridgeOptions): Promise<void> {
  const { link, logger } = options;
  const reconnectMs = options.reconnectMs ?? RECONNECT_MS;
  const writeLine = options.write ?? ((line: string) => void process.stdout.write(line));
  const write = (message: JsonRpcMessage) => writeLine(`${JSON.stringify(message)}\n`);
  const inFlight = new Map<string, InFlight>();
  const keyOf = (id: unknown) => JSON.stringify(id);
  let isClosing = false;
  /** The 2025 session: the client's initialize (to open it again) and what the service answered. */
  const session: {
    initialize?: JsonRpcMessage;
    id?: string | undefined;
    version?: string | undefined;
    hasListChanged?: boolean;
    listening?: AbortController;
    reopening?: Promise<void> | undefined;
    /** Its retrieve_tools calls that succeeded: asked again after a restart, they register its tools again. */
    searches: JsonRpcMessage[];
  } = { searches: [] };
  let reopenings = 0;

  const headersFor = (message: JsonRpcMessage | undefined, inSession: boolean) => {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${link.token()}`,
    };
    const modern = message && isRequest(message) ? envelopeVersion(message) : undefined;
    if (message && modern) return { ...headers, ...modernHeaders(message, modern) };
    if (inSession && session.id) headers["mcp-session-id"] = session.id;
    if (inSession && session.version) headers["mcp-protocol-version"] = session.version;
    return headers;
  };

  /** POSTs a message; a service that does not answer is waited for (up to reconnectMs), once. */
  const post = async (message: JsonRpcMessage, signal: AbortSignal, inSession = true): Promise<Response> => {
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
  };

  /** Passes on what a response carries; true when it held the answer to `id`. */
  const relay = async (response: Response, id: unknown, sink = write): Promise<boolean> => {
    let isAnswered = false;
    const seen = (message: JsonRpcMessage) => {
      if (isResponse(message) && keyOf(message.id) === keyOf(id)) isAnswered = true;
      sink(message);
    };
    const type = response.headers.get("content-type") ?? "";
    if (type.includes("text/event-stream") && response.body) {
      for await (const message of sseMessages(response.body)) seen(message);
    } else if (type.includes("application/json")) {
      const text = await response.text();
      // An HTTP error's JSON-RPC body may name no id (the service could not tell it): it is this one's.
      for (const message of parseMessage(text) ?? [])
        seen(isResponse(message) && message.id === null && id !== undefined ? { ...message, id } : message);
      if (!isAnswered && id !== undefined && !response.ok)
        seen(
          errorAnswer(
            id,
            `The mcpproxy service refused the request (HTTP ${response.status}): ${text.slice(0, 300)}`,
          ),
        );
    } else {
      await response.body?.cancel();
      if (!response.ok && id !== undefined)
        seen(errorAnswer(id, `The mcpproxy service refused the request (HTTP ${response.status})`));
    }
    return isAnswered;
  };

  const forwardRequest = async (message: JsonRpcMessage) => {
    const id = message.id;
    const key = keyOf(id);
    const isModern = envelopeVersion(message) !== undefined;
    const entry: InFlight = { controller: new AbortController(), isModern, isCancelled: false };
    inFlight.set(key, entry);
    const isListen = message.method === "subscriptions/listen";
    try {
      if (!isModern && message.method === "initialize") {
        session.initialize = message;
        await openSession(message, entry.controller.signal, write);
        return;
      }
      for (let attempt = 0; ; attempt++) {
        if (!isModern && session.reopening) await session.reopening;
        let response: Response;
        try {
          response = await post(message, entry.controller.signal);
        } catch (error) {
          if (!entry.isCancelled && !isClosing) write(errorAnswer(id, unreachableMessage(error)));
          return;
        }
        // A session the service does not know: it restarted. Open it again; the request never ran.
        if (!isModern && response.status === 404 && session.initialize && attempt === 0) {
          await response.body?.cancel();
          await reopen();
          continue;
        }
        let isAnswered = false;
        const isSearch =
          !isModern && (message.params as { name?: unknown } | undefined)?.name === "retrieve_tools";
        try {
          isAnswered = await relay(response, id, (answer) => {
            if (isSearch && isResponse(answer) && keyOf(answer.id) === keyOf(id)) keepSearch(message, answer);
            write(answer);
          });
        } catch {
          // The stream broke: the service went away while it answered.
        }
        if (isAnswered || entry.isCancelled || isClosing) return;
        // A listen stream outlives a restart: asked again as it was, once the service is back.
        if (isListen && (await waitForService(link, reconnectMs, entry.controller.signal))) continue;
        write(errorAnswer(id, WENT_AWAY));
        return;
      }
    } finally {
      inFlight.delete(key);
    }
  };

  const keepSearch = (search: JsonRpcMessage, answer: JsonRpcMessage) => {
    const result = answer.result as { isError?: unknown } | undefined;
    if (!result || result.isError === true) return;
    session.searches.push(search);
    if (session.searches.length > SEARCHES_KEPT) session.searches.shift();
  };

  /** The session's searches asked again, in their order, their answers kept from the client. */
  const replaySearches = async () => {
    for (const [index, search] of session.searches.entries()) {
      const replay = { ...search, id: `mcpproxy-bridge-search-${reopenings}-${index}` };
      const response = await post(replay, AbortSignal.timeout(reconnectMs)).catch(() => undefined);
      if (response) await relay(response, replay.id, () => {}).catch(() => undefined);
    }
  };

  /** Opens the 2025 session with `initialize`; the answer goes to `sink` (the client, or the bridge alone). */
  const openSession = async (initialize: JsonRpcMessage, signal: AbortSignal, sink: typeof write) => {
    session.id = undefined;
    session.version = undefined;
    let response: Response;
    try {
      response = await post(initialize, signal, false);
    } catch (error) {
      sink(errorAnswer(initialize.id, unreachableMessage(error)));
      return;
    }
    const sessionId = response.headers.get("mcp-session-id") ?? undefined;
    await relay(response, initialize.id, (message) => {
      const result = message.result as
        | { protocolVersion?: unknown; capabilities?: { tools?: { listChanged?: unknown } } }
        | undefined;
      if (isResponse(message) && keyOf(message.id) === keyOf(initialize.id) && result) {
        session.id = sessionId;
        session.version = typeof result.protocolVersion === "string" ? result.protocolVersion : undefined;
        session.hasListChanged = result.capabilities?.tools?.listChanged === true;
      }
      sink(message);
    }).catch(() => sink(errorAnswer(initialize.id, unreachableMessage(undefined))));
  };

  /** After a restart: the client's session opened again, its GET stream too, and the client told. */
  const reopen = () => {
    session.reopening ??= (async () => {
      session.listening?.abort();
      session.id = undefined;
      const controller = new AbortController();
      if (!session.initialize || !(await waitForService(link, reconnectMs, controller.signal))) return;
      const initialize = { ...session.initialize, id: `mcpproxy-bridge-${++reopenings}` };
      await openSession(initialize, controller.signal, () => {});
      if (!session.id) {
        logger.warn("the mcpproxy service did not open the session again; the client's requests will fail");
        return;
      }
      await notifyInitialized();
      await replaySearches();
      logger.info(
        `the mcpproxy service restarted: the session is open again${session.searches.length > 0 ? `, its ${session.searches.length} searches asked again` : ""}`,
      );
      if (session.hasListChanged) write({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    })().finally(() => {
      session.reopening = undefined;
    });
    return session.reopening;
  };

  const notifyInitialized = async () => {
    const response = await post(
      { jsonrpc: "2.0", method: "notifications/initialized" },
      AbortSignal.timeout(reconnectMs),
    ).catch(() => undefined);
    await response?.body?.cancel();
    startListening();
  };

  /** The session's GET stream: what the service sends outside a request, kept open across hiccups. */
  const startListening = () => {
    const sessionId = session.id;
    if (!sessionId) return;
    session.listening?.abort();
    const controller = new AbortController();
    session.listening = controller;
    void (async () => {
      let failures = 0;
      while (!isClosing && !controller.signal.aborted && session.id === sessionId) {
        try {
          const url = link.url();
          if (!url) throw new Error("no service");
          const response = await fetch(url, {
            method: "GET",
            headers: { ...headersFor(undefined, true), accept: "text/event-stream" },
            signal: controller.signal,
          });
          if (response.status === 404) {
            await response.body?.cancel();
            void reopen();
            return;
          }
          if (response.status === 405) return;
          if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
          failures = 0;
          for await (const message of sseMessages(response.body)) write(message);
        } catch {
          if (isClosing || controller.signal.aborted) return;
        }
        // The stream ended: a restart (the next GET is told 404, or waits for the service) or a hiccup.
        failures++;
        await Bun.sleep(Math.min(100 * 2 ** failures, 2_000));
        if (failures > 1) await link.refresh();
      }
    })();
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
    const response = await post(message, AbortSignal.timeout(reconnectMs)).catch((error: unknown) => {
      logger.warn(`could not pass a message to the mcpproxy service: ${unreachableMessage(error)}`);
      return undefined;
    });
    await response?.body?.cancel();
    if (message.method === "notifications/initialized") startListening();
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

  await readLines(options.input ?? process.stdin, options.maxLineBytes, onLine, (size) =>
    write(errorAnswer(null, `Request refused: a line of ${size} bytes is over maxRequestBytes`, -32600)),
  );
  isClosing = true;
  session.listening?.abort();
  for (const entry of inFlight.values()) entry.controller.abort();
  // The client left: its session ends, and nothing else of the service.
  const url = link.url();
  if (session.id && url)
    await fetch(url, {
      method: "DELETE",
      headers: headersFor(undefined, true),
      signal: AbortSignal.timeout(2_000),
    }).catch(() => undefined);
}

/** Reads newline-delimited messages until the input ends; a line over `maxBytes` is refused whole. */
async function readLines(
  input: AsyncIterable<Uint8Array>,
  maxBytes: number,
  onLine: (text: string) => void,
  onTooLong: (size: number) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = "";
  let skipping = 0;
  for await (const chunk of input) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
      if (skipping > 0) {
        onTooLong(skipping + line.length);
        skipping = 0;
      } else if (line.trim()) onLine(line);
    }
    if (buffer.length > maxBytes) {
      skipping += buffer.length;
      buffer = "";
    }
  }
  if (buffer.trim() && skipping === 0) onLine(buffer);
}

/**
 * Whether the service was never reached (nothing listens, or no service runs): the message did not
 * arrive, and may be sent again once the service is back. A connection that broke after the
 * message went out is not this: what it asked may have run.
 */
function isUnreachable(error: unknown, url: string | undefined): boolean {
  if (!url) return true;
  const code = (error as { code?: string }).code ?? "";
  return /ECONNREFUSED|ConnectionRefused|FailedToOpenSocket/i.test(
    `${code} ${(error as Error)?.message ?? ""}`,
  );
}

/** The answer to a request the service did not answer: never reached, or lost on the way. */
function unreachableMessage(error: unknown): string {
  if (error !== undefined && !isUnreachable(error, "-")) return WENT_AWAY;
  const why = error instanceof Error ? ` (${error.message})` : "";
  return (
    `The mcpproxy service is not running${why}: start it with \`mcpproxy start\`, or run ` +
    "`mcpproxy serve --standalone` to serve without it."
  );
}

const WENT_AWAY =
  "The mcpproxy service went away before it answered (a restart or a crash): the request may or may " +
  "not have run. Call it again once `mcpproxy status` says the service runs.";
