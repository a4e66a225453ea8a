import type {
  CallToolResult,
  InputRequiredResult,
  Result,
  StandardSchemaV1,
} from "@modelcontextprotocol/client";
import { EmptyResultSchema } from "@modelcontextprotocol/core";
import type { ServerConfig } from "../config/parse-server.ts";
import { describeError, ProxyError } from "../errors.ts";
import { createCallGate } from "../limits/call-gate.ts";
import { launchRefusal } from "../security/launch-spec.ts";
import { createMemoryEraStore } from "../store/sqlite/era-store.ts";
import type { CallOptions, InputMethod } from "./forward-call.ts";
import { CONNECT_CONCURRENCY, mapConcurrently } from "./map-concurrently.ts";
import { createPoolRequests, type LaneRoute, type RequestOptions } from "./pool-requests.ts";
import { createPoolStates } from "./pool-states.ts";
import type { ConnectOutcome, ServerStatus, UpstreamPoolOptions } from "./pool-types.ts";
import { DEFAULT_RETRY_POLICY, isCircuitOpen, type RetryPolicy } from "./restart-policy.ts";
import { applyServerChanges, type ServerChanges } from "./server-changes.ts";
import { createSlotLifecycle } from "./server-slot.ts";
import { type Slot, slotOf } from "./slot.ts";
import type { UpstreamConnection } from "./upstream-connection.ts";
import { createUpstreamSubscriptions } from "./upstream-subscriptions.ts";

/** What a call is answered while a person has paused the proxy. */
export const PAUSED_MESSAGE =
  "mcpproxy is paused by its user (from its console or tray): calls are not run until they resume it. Tell the user.";

/**
 * All upstream servers. Each server is on its own: one that fails to start, hangs or dies is
 * reported with its name, reason and stderr and never holds up another. A server has one live
 * connection at most, made by whichever path needs it first (start, a call, the background retry).
 * `lazy` servers are not started until a call needs them; their tools stay searchable from the
 * saved index. See restart-policy.ts for how failed servers are retried.
 */
export interface UpstreamPool {
  /**
   * Connects the enabled servers (lazy ones too with `includeLazy`, or those it names);
   * `onOutcome` hears about each as it settles.
   */
  connectAll(
    onOutcome?: (outcome: ConnectOutcome) => void | Promise<void>,
    includeLazy?: boolean | ((server: string) => boolean),
  ): Promise<ConnectOutcome[]>;
  callTool(
    server: string,
    tool: string,
    args: Record<string, unknown> | undefined,
    options?: CallOptions,
  ): Promise<CallToolResult | InputRequiredResult>;
  /** Where a plain lane may send a tools/call of `server` at once (pool-requests.ts), or undefined. */
  laneTo(server: string): LaneRoute | undefined;
  /**
   * Paused by a person (the console, the tray): tools/call, prompts/get and resources/read are
   * refused with PAUSED_MESSAGE, and no lane is offered, while every server keeps running.
   */
  setPaused(paused: boolean): void;
  isPaused(): boolean;
  /**
   * prompts/get or resources/read forwarded as a call is (clocks, relays to the caller, input
   * rounds): the result, or a 2026 server's input_required.
   */
  forward(
    server: string,
    method: Exclude<InputMethod, "tools/call">,
    params: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<Result>;
  /**
   * Any other request to a server (resources, prompts, completion, logging), connecting it if need
   * be. resources/subscribe and unsubscribe are kept with the server across reconnects and reach a
   * 2026-07-28 server as its listen stream's resourceSubscriptions (upstream-subscriptions.ts).
   * Other requests that revision removed (logging/setLevel, ping) are not sent to a server of that
   * era: they resolve empty.
   */
  request<T extends StandardSchemaV1>(
    server: string,
    request: { method: string; params?: Record<string, unknown> },
    resultSchema: T,
    options?: RequestOptions,
  ): Promise<StandardSchemaV1.InferOutput<T>>;
  /** The servers connected now, with their connections and since when (kept: asking walks only these). */
  live(): { server: string; connection: UpstreamConnection; connectedSince?: number | undefined }[];
  /** Moves whenever `live` may answer otherwise (a server connected, reconnected or gone): kept, never counted. */
  liveVersion(): number;
  /**
   * The servers still making their first connection, in the config's order. Kept as they change:
   * asking costs nothing per configured server (retrieve_tools asks on every search).
   */
  connecting(): readonly string[];
  /** Whether a server that should be connected is still starting or reconnecting (kept, as `connecting`). */
  isStarting(): boolean;
  /**
   * Brings the pool to this server list (a config change): servers gone are stopped and dropped,
   * changed ones (any setting) stopped and set up again, new ones added; unchanged servers keep
   * their connection. Nothing is started here: see `connectServer`.
   */
  setServers(servers: readonly ServerConfig[]): Promise<ServerChanges>;
  /** Connects one server (if it is enabled), as connectAll does for all. */
  connectServer(server: string): Promise<ConnectOutcome>;
  /** Stops the server's connection and starts it again. */
  restart(server: string): Promise<ConnectOutcome>;
  status(): ServerStatus[];
  /** From now on, retry every failed or disconnected server in the background until it connects. */
  startRetrying(policy?: RetryPolicy): void;
  close(): Promise<void>;
}

export function createUpstreamPool(options: UpstreamPoolOptions): UpstreamPool {
  const slots = new Map<string, Slot>();
  const gateOf = options.gateOf ?? createCallGate;
  const states = createPoolStates();
  const lifecycle = createSlotLifecycle(options, options.eras ?? createMemoryEraStore(), states.track);
  const { outcomeOf, retire, drop } = lifecycle;
  /** Settles when the pool closes: a connect held back for the clients (client-priority.ts) waits no more. */
  let markClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  const close = () => {
    markClosed();
    return lifecycle.closeAll(slots.values());
  };
  const turn = (worker: number) => {
    const waiting = lifecycle.isClosed() ? undefined : options.clientPriority?.turn(worker);
    return waiting && Promise.race([waiting, closed]);
  };

  const usableSlot = (server: string): Slot => {
    const slot = slots.get(server);
    if (!slot) {
      throw new ProxyError("UPSTREAM_UNAVAILABLE", `Server ${server} is not in the configuration any more.`);
    }
    if (slot.state === "disabled") {
      throw new ProxyError("UPSTREAM_UNAVAILABLE", `Server ${server} is disabled in the configuration.`);
    }
    const refusal = launchRefusal(slot.config);
    if (refusal) throw new ProxyError("AWAITING_APPROVAL", refusal);
    return slot;
  };
  // What the pool sends a server, calls and other requests (pool-requests.ts).
  const { sendOn, forwardCall, request, laneTo } = createPoolRequests({ options, lifecycle, usableSlot });
  let paused = false;

  let nextSeq = 0;
  /** A slot for `config`, with the subscriptions and the place of the slot it replaces (a config change) if any. */
  const newSlot = (config: ServerConfig, replaced?: Slot) => {
    const slot = slotOf(
      config,
      replaced?.subscriptions ??
        createUpstreamSubscriptions(
          config.name,
          (connection, method, uri) => sendOn(connection, { method, params: { uri } }, EmptyResultSchema, {}),
          options.logger,
        ),
      replaced?.seq ?? nextSeq++,
      gateOf,
    );
    states.track(slot);
    return slot;
  };
  for (const config of options.servers) slots.set(config.name, newSlot(config));

  options.stopSignal?.addEventListener("abort", () => void close(), { once: true });

  return {
    async connectAll(onOutcome, includeLazy = false) {
      const isWanted = typeof includeLazy === "function" ? includeLazy : () => includeLazy;
      const wanted = [...slots.values()].filter(
        (slot) => slot.config.enabled && (!slot.config.lazy || isWanted(slot.config.name)),
      );
      // Clients first: while they ask, fewer connects in flight (client-priority.ts); none held once closed.
      return mapConcurrently(
        wanted,
        CONNECT_CONCURRENCY,
        async (slot): Promise<ConnectOutcome> => {
          const outcome = await outcomeOf(slot);
          try {
            await onOutcome?.(outcome);
          } catch (error) {
            options.logger.error(`handling ${slot.config.name} failed: ${describeError(error)}`);
          }
          return outcome;
        },
        turn,
      );
    },

    laneTo: (server) => (paused ? undefined : laneTo(server)),
    setPaused(next) {
      paused = next;
    },
    isPaused: () => paused,

    callTool(server, tool, args, callOptions = {}) {
      if (paused) return Promise.reject(new Error(PAUSED_MESSAGE));
      return forwardCall({ server, tool, args }, callOptions) as Promise<
        CallToolResult | InputRequiredResult
      >;
    },

    forward(server, method, params, callOptions = {}) {
      if (paused) return Promise.reject(new Error(PAUSED_MESSAGE));
      const what = method === "prompts/get" ? String(params.name) : String(params.uri);
      return forwardCall({ server, method, tool: what, args: undefined, params }, callOptions);
    },

    request,

    setServers: (servers) => applyServerChanges(slots, servers, { newSlot, retire, gateOf }),

    async connectServer(server) {
      // One that may not start (awaiting approval, a variable unset) is reported as such, not thrown.
      const slot = slots.get(server);
      return outcomeOf(slot && launchRefusal(slot.config) ? slot : usableSlot(server));
    },

    async restart(server) {
      const slot = usableSlot(server);
      if (slot.connection) await drop(slot, slot.connection, "restarted on request");
      slot.failures = 0;
      return outcomeOf(slot);
    },

    live() {
      return states
        .live()
        .flatMap((slot) =>
          slot.connection
            ? [{ server: slot.config.name, connection: slot.connection, connectedSince: slot.connectedSince }]
            : [],
        );
    },

    liveVersion: states.liveVersion,
    connecting: states.connecting,
    isStarting: states.isStarting,

    status() {
      return [...slots.values()].map((slot) => ({
        name: slot.config.name,
        state: slot.state,
        transport: slot.config.transport,
        toolCount: slot.toolCount,
        // Shown on /health, the status page and to agents: redacted when it was stored (slot.ts).
        ...(slot.error ? { error: slot.error } : {}),
        ...(slot.connection && slot.connectedSince ? { connectedSince: slot.connectedSince } : {}),
        ...(slot.connection?.protocolVersion ? { protocolVersion: slot.connection.protocolVersion } : {}),
        ...(slot.gate ? { limits: slot.gate.status() } : {}),
        ...(!slot.connection && slot.retryTimer && slot.retryAt
          ? { retryAt: slot.retryAt, failures: slot.failures, circuitOpen: isCircuitOpen(slot.failures) }
          : {}),
      }));
    },

    startRetrying(policy = DEFAULT_RETRY_POLICY) {
      lifecycle.startRetrying(policy, slots.values());
    },

    close,
  };
}
