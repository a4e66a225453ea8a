import type {
  CallToolResult,
  ClientCapabilities,
  InputRequiredResult,
  Result,
  StandardSchemaV1,
} from "@modelcontextprotocol/client";
import { ProtocolError } from "@modelcontextprotocol/client";
import { EmptyResultSchema } from "@modelcontextprotocol/core";
import { isLoginNeeded } from "../auth/oauth-provider.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import { describeError, ProxyError } from "../errors.ts";
import { createCallGate } from "../limits/call-gate.ts";
import { launchRefusal } from "../security/launch-spec.ts";
import { redactSecrets } from "../security/redact-secrets.ts";
import { createMemoryEraStore } from "../store/sqlite/era-store.ts";
import {
  type CallOptions,
  type ForwardedCall,
  forwardToolCall,
  type InputMethod,
  tooDeep,
} from "./forward-call.ts";
import { CONNECT_CONCURRENCY, mapConcurrently } from "./map-concurrently.ts";
import { CAPABILITIES_META_KEY } from "./modern-wire.ts";
import type { ConnectOutcome, ServerStatus, UpstreamPoolOptions } from "./pool-types.ts";
import { withCaller } from "./relay-routing.ts";
import { DEFAULT_RETRY_POLICY, isCircuitOpen, type RetryPolicy } from "./restart-policy.ts";
import { isNestedDeeperThan, MAX_RESULT_DEPTH } from "./result-depth.ts";
import { createSlotLifecycle, type Slot, slotOf } from "./server-slot.ts";
import type { UpstreamConnection } from "./upstream-connection.ts";
import { upstreamErrorText } from "./upstream-errors.ts";
import {
  createUpstreamSubscriptions,
  type SubscriptionMethod,
  type UpstreamSubscriptions,
} from "./upstream-subscriptions.ts";

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
    options?: {
      signal?: AbortSignal | undefined;
      /** What the caller can answer, told to a 2026 server with the request. */
      clientCapabilities?: ClientCapabilities | undefined;
    },
  ): Promise<StandardSchemaV1.InferOutput<T>>;
  /** The servers connected now, with their connections. */
  live(): { server: string; connection: UpstreamConnection }[];
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

interface ServerChanges {
  added: string[];
  removed: string[];
  changed: string[];
}

/** Methods the 2026-07-28 revision removed that a modern server is not sent (see `request`). */
const REMOVED_IN_2026 = new Set(["logging/setLevel", "ping"]);

const isSubscriptionMethod = (method: string): method is SubscriptionMethod =>
  method === "resources/subscribe" || method === "resources/unsubscribe";

/**
 * Settings about how the proxy treats a server's calls, not about the connection: a change to them
 * alone is applied to the running server, which is not restarted.
 */
const CALL_HANDLING_KEYS = ["limits", "autoRetryFallback", "toolOverrides"] as const;
const sameButCallHandling = (a: ServerConfig, b: ServerConfig) => {
  const without = (config: ServerConfig) =>
    JSON.stringify({ ...config, ...Object.fromEntries(CALL_HANDLING_KEYS.map((key) => [key, undefined])) });
  return without(a) === without(b);
};

const DEFAULT_CALL_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_CALL_MS = 20 * 60_000;

export function createUpstreamPool(options: UpstreamPoolOptions): UpstreamPool {
  const slots = new Map<string, Slot>();
  const gateOf = options.gateOf ?? createCallGate;
  /** A slot for `config`, with the subscriptions of the slot it replaces (a config change) if any. */
  const newSlot = (config: ServerConfig, kept?: UpstreamSubscriptions) =>
    slotOf(
      config,
      kept ??
        createUpstreamSubscriptions(
          config.name,
          (connection, method, uri) => sendOn(connection, { method, params: { uri } }, EmptyResultSchema, {}),
          options.logger.child(config.name),
        ),
      gateOf,
    );
  for (const config of options.servers) slots.set(config.name, newSlot(config));
  const lifecycle = createSlotLifecycle(options, options.eras ?? createMemoryEraStore());
  const { connected, outcomeOf, retire, awaitLogin, drop } = lifecycle;
  const close = () => lifecycle.closeAll(slots.values());

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

  options.stopSignal?.addEventListener("abort", () => void close(), { once: true });

  /** One request on `connection`; a failure to reach the server is told with its name. */
  const sendOn = async <T extends StandardSchemaV1>(
    connection: UpstreamConnection,
    request: { method: string; params?: Record<string, unknown> },
    resultSchema: T,
    requestOptions: { signal?: AbortSignal | undefined; clientCapabilities?: ClientCapabilities | undefined },
  ): Promise<StandardSchemaV1.InferOutput<T>> => {
    const server = connection.server;
    const sent =
      connection.era === "modern" && requestOptions.clientCapabilities
        ? {
            ...request,
            params: {
              ...request.params,
              _meta: {
                ...(request.params?._meta as Record<string, unknown> | undefined),
                [CAPABILITIES_META_KEY]: requestOptions.clientCapabilities,
              },
            },
          }
        : request;
    let result: StandardSchemaV1.InferOutput<T>;
    try {
      result = await connection.client.request(sent as never, resultSchema, {
        timeout: server.callTimeoutMs ?? options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
        ...(requestOptions.signal ? { signal: requestOptions.signal } : {}),
      });
    } catch (error) {
      if (error instanceof ProtocolError) throw error;
      throw new ProxyError(
        "UPSTREAM_UNAVAILABLE",
        `${request.method} on ${server.name} failed: ${upstreamErrorText(error)}`,
        { cause: error },
      );
    }
    if (isNestedDeeperThan(result, MAX_RESULT_DEPTH)) throw tooDeep(`${request.method} on ${server.name}`);
    return result;
  };

  /** A call (tools/call, prompts/get, resources/read) through forward-call.ts, tracked on its server. */
  const forwardCall = async (call: Omit<ForwardedCall, "limits">): Promise<Result> => {
    const slot = usableSlot(call.server);
    const limits = {
      callTimeoutMs: slot.config.callTimeoutMs ?? options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
      maxCallMs: options.maxCallMs ?? DEFAULT_MAX_CALL_MS,
    };
    if (slot.state === "needs-login" && !slot.connection && !slot.pending) {
      throw new ProxyError("UPSTREAM_UNAVAILABLE", slot.error ?? `${call.server} needs a login`);
    }
    // Its turn under its call limits first (src/limits/): a refusal says which limit, and when to retry.
    const admission = await slot.gate?.enter(call.signal);
    call.onAdmitted?.(admission?.waitedMs ?? 0);
    return forwardToolCall(
      { ...call, limits },
      {
        current: () => slot.connection,
        connection: () => connected(slot),
        drop: (connection, reason) => drop(slot, connection, reason),
        isClosed: lifecycle.isClosed,
        track: (active) => {
          slot.active.push(active);
          if (active.session && slot.callers.at(-1) !== active.session) {
            slot.callers = withCaller(slot.callers, active.session);
          }
          return () => {
            const at = slot.active.indexOf(active);
            if (at >= 0) slot.active.splice(at, 1);
          };
        },
      },
    )
      .catch((error: unknown) => {
        // The login ended (revoked, refresh refused): the server waits for a new one.
        if (!isLoginNeeded(error)) throw error;
        const reason = describeError(error);
        const connection = slot.connection;
        awaitLogin(slot, reason);
        void connection?.close();
        throw new ProxyError("UPSTREAM_UNAVAILABLE", reason, { cause: error });
      })
      .finally(() => admission?.release());
  };

  return {
    async connectAll(onOutcome, includeLazy = false) {
      const isWanted = typeof includeLazy === "function" ? includeLazy : () => includeLazy;
      const wanted = [...slots.values()].filter(
        (slot) => slot.config.enabled && (!slot.config.lazy || isWanted(slot.config.name)),
      );
      return mapConcurrently(wanted, CONNECT_CONCURRENCY, async (slot): Promise<ConnectOutcome> => {
        const outcome = await outcomeOf(slot);
        try {
          await onOutcome?.(outcome);
        } catch (error) {
          options.logger.error(`handling ${slot.config.name} failed: ${describeError(error)}`);
        }
        return outcome;
      });
    },

    callTool(server, tool, args, callOptions = {}) {
      return forwardCall({ server, tool, args, ...callOptions }) as Promise<
        CallToolResult | InputRequiredResult
      >;
    },

    forward(server, method, params, callOptions = {}) {
      const what = method === "prompts/get" ? String(params.name) : String(params.uri);
      return forwardCall({ server, method, tool: what, args: undefined, params, ...callOptions });
    },

    async request(server, request, resultSchema, requestOptions = {}) {
      const slot = usableSlot(server);
      const connection = await connected(slot);
      const uri = request.params?.uri;
      if (isSubscriptionMethod(request.method) && typeof uri === "string") {
        await slot.subscriptions.change(connection, request.method, uri);
        return {} as StandardSchemaV1.InferOutput<typeof resultSchema>;
      }
      if (connection.era === "modern" && REMOVED_IN_2026.has(request.method)) {
        options.logger
          .child(server)
          .debug(`${request.method} not sent: the server speaks 2026-07-28, which has no such method`);
        return {} as StandardSchemaV1.InferOutput<typeof resultSchema>;
      }
      return sendOn(connection, request, resultSchema, requestOptions);
    },

    async setServers(servers) {
      const next = new Map(servers.map((config) => [config.name, config]));
      const changes: ServerChanges = { added: [], removed: [], changed: [] };
      const retiring: Promise<void>[] = [];
      for (const [name, slot] of slots) {
        const config = next.get(name);
        if (config && JSON.stringify(config) === JSON.stringify(slot.config)) continue;
        // New limits (or fallback setting) alone do not restart a server: its door takes them, its calls go on.
        if (config && sameButCallHandling(config, slot.config)) {
          slot.config = config;
          if (config.limits && slot.gate) slot.gate.setLimits(config.limits);
          else slot.gate = config.limits ? gateOf(name, config.limits) : undefined;
          continue;
        }
        retiring.push(retire(slot));
        if (config) {
          changes.changed.push(name);
          slots.set(name, newSlot(config, slot.subscriptions));
        } else {
          changes.removed.push(name);
          slots.delete(name);
        }
      }
      for (const [name, config] of next) {
        if (slots.has(name)) continue;
        changes.added.push(name);
        slots.set(name, newSlot(config));
      }
      await Promise.all(retiring);
      return changes;
    },

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
      return [...slots.values()].flatMap((slot) =>
        slot.connection ? [{ server: slot.config.name, connection: slot.connection }] : [],
      );
    },

    status() {
      return [...slots.values()].map((slot) => ({
        name: slot.config.name,
        state: slot.state,
        transport: slot.config.transport,
        toolCount: slot.toolCount,
        // Shown on /health, the status page and to agents: known secret shapes never are.
        ...(slot.error ? { error: redactSecrets(slot.error) } : {}),
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
