import type { Logger } from "../log.ts";
import {
  errorAnswer,
  isResponse,
  type JsonRpcMessage,
  sseMessages,
  unreachableMessage,
} from "./bridge-wire.ts";
import { keyOf, type ServiceChannel } from "./service-channel.ts";
import { type ServiceLink, waitForService } from "./service-link.ts";

/**
 * The 2025 session a bridge holds for its client: opened by the client's own `initialize`, its GET
 * stream kept open for what the service sends outside a request, and, when the service restarted
 * and no longer knows it, opened again with that same `initialize`, its last searches asked again
 * (so that its dynamic tools are registered again) and the client told its tool list changed.
 */
export interface BridgeSession {
  readonly id: string | undefined;
  readonly version: string | undefined;
  /** The service opened it once: a session it lost since is opened again. */
  readonly hasOpened: boolean;
  readonly reopening: Promise<void> | undefined;
  /** Opens it with the client's `initialize`; the answer goes to `sink`. */
  open(
    initialize: JsonRpcMessage,
    signal: AbortSignal,
    sink: (message: JsonRpcMessage) => void,
  ): Promise<void>;
  reopen(): Promise<void>;
  startListening(): void;
  /** A retrieve_tools call and its answer: kept, when it succeeded, to be asked again after a restart. */
  keepSearch(search: JsonRpcMessage, answer: JsonRpcMessage): void;
  stop(): void;
}

export interface BridgeSessionOptions {
  channel: ServiceChannel;
  link: ServiceLink;
  logger: Logger;
  reconnectMs: number;
  write: (message: JsonRpcMessage) => void;
  isClosing: () => boolean;
}

/** The searches kept to register a session's dynamic tools again after a restart (the latest last). */
const SEARCHES_KEPT = 16;

export function createBridgeSession(options: BridgeSessionOptions): BridgeSession {
  const { channel, link, logger, reconnectMs, write } = options;
  let initialize: JsonRpcMessage | undefined;
  let id: string | undefined;
  let version: string | undefined;
  let hasOpened = false;
  let hasListChanged = false;
  let listening: AbortController | undefined;
  let reopening: Promise<void> | undefined;
  let reopenings = 0;
  const searches: JsonRpcMessage[] = [];

  const open = async (
    message: JsonRpcMessage,
    signal: AbortSignal,
    sink: (message: JsonRpcMessage) => void,
  ) => {
    id = undefined;
    version = undefined;
    let response: Response;
    try {
      response = await channel.post(message, signal, false);
    } catch (error) {
      sink(errorAnswer(message.id, unreachableMessage(error)));
      return;
    }
    const sessionId = response.headers.get("mcp-session-id") ?? undefined;
    await channel
      .relay(response, message.id, (answer) => {
        const result = answer.result as
          | { protocolVersion?: unknown; capabilities?: { tools?: { listChanged?: unknown } } }
          | undefined;
        if (isResponse(answer) && keyOf(answer.id) === keyOf(message.id) && result) {
          id = sessionId;
          hasOpened ||= sessionId !== undefined;
          version = typeof result.protocolVersion === "string" ? result.protocolVersion : undefined;
          hasListChanged = result.capabilities?.tools?.listChanged === true;
        }
        sink(answer);
      })
      .catch(() => sink(errorAnswer(message.id, unreachableMessage(undefined))));
  };

  const notifyInitialized = async () => {
    const response = await channel
      .post({ jsonrpc: "2.0", method: "notifications/initialized" }, AbortSignal.timeout(reconnectMs))
      .catch(() => undefined);
    await response?.body?.cancel();
    startListening();
  };

  /** The searches asked again, in their order, their answers kept from the client. */
  const replaySearches = async () => {
    for (const [index, search] of searches.entries()) {
      const replay = { ...search, id: `mcpproxy-bridge-search-${reopenings}-${index}` };
      const response = await channel.post(replay, AbortSignal.timeout(reconnectMs)).catch(() => undefined);
      if (response) await channel.relay(response, replay.id, () => {}).catch(() => undefined);
    }
  };

  const reopen = () => {
    reopening ??= (async () => {
      listening?.abort();
      id = undefined;
      if (!initialize || !(await waitForService(link, reconnectMs, new AbortController().signal))) return;
      await open(
        { ...initialize, id: `mcpproxy-bridge-${++reopenings}` },
        AbortSignal.timeout(reconnectMs),
        () => {},
      );
      if (!id) {
        logger.warn("the mcpproxy service did not open the session again; the client's requests will fail");
        return;
      }
      await notifyInitialized();
      await replaySearches();
      const asked = searches.length > 0 ? `, its ${searches.length} searches asked again` : "";
      logger.info(`the mcpproxy service restarted: the session is open again${asked}`);
      if (hasListChanged) write({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    })().finally(() => {
      reopening = undefined;
    });
    return reopening;
  };

  /** The GET stream, kept open across hiccups; a 404 is a service that restarted. */
  const startListening = () => {
    const sessionId = id;
    if (!sessionId) return;
    listening?.abort();
    const controller = new AbortController();
    listening = controller;
    const isOver = () => options.isClosing() || controller.signal.aborted || id !== sessionId;
    void (async () => {
      let failures = 0;
      while (!isOver()) {
        try {
          const url = link.url();
          if (!url) throw new Error("no service");
          const response = await fetch(url, {
            method: "GET",
            headers: { ...channel.headersFor(undefined, true), accept: "text/event-stream" },
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
          if (isOver()) return;
        }
        // The stream ended: a restart (the next GET is told 404, or waits for the service) or a hiccup.
        failures++;
        await Bun.sleep(Math.min(100 * 2 ** failures, 2_000));
        if (failures > 1) await link.refresh();
      }
    })();
  };

  return {
    get id() {
      return id;
    },
    get version() {
      return version;
    },
    get hasOpened() {
      return hasOpened;
    },
    get reopening() {
      return reopening;
    },
    open(message, signal, sink) {
      initialize = message;
      return open(message, signal, sink);
    },
    reopen,
    startListening,
    keepSearch(search, answer) {
      const result = answer.result as { isError?: unknown } | undefined;
      if (!result || result.isError === true) return;
      searches.push(search);
      if (searches.length > SEARCHES_KEPT) searches.shift();
    },
    stop: () => listening?.abort(),
  };
}
