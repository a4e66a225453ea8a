import type { ClientCapabilities, Result, StandardSchemaV1 } from "@modelcontextprotocol/client";
import { ProtocolError } from "@modelcontextprotocol/client";
import { isLoginNeeded } from "../auth/oauth-provider.ts";
import { describeError, ProxyError } from "../errors.ts";
import {
  type ActiveCall,
  type CallLimits,
  type CallOptions,
  type CallRoute,
  type CallTarget,
  forwardToolCall,
  tooDeep,
} from "./forward-call.ts";
import { CAPABILITIES_META_KEY } from "./modern-wire.ts";
import type { UpstreamPoolOptions } from "./pool-types.ts";
import { withCaller } from "./relay-routing.ts";
import { isNestedDeeperThan, MAX_RESULT_DEPTH } from "./result-depth.ts";
import type { SlotLifecycle } from "./server-slot.ts";
import type { Slot } from "./slot.ts";
import type { UpstreamConnection } from "./upstream-connection.ts";
import { upstreamErrorText } from "./upstream-errors.ts";
import type { SubscriptionMethod } from "./upstream-subscriptions.ts";

/**
 * What the pool sends a server, and how: a call (tools/call, prompts/get, resources/read) under the
 * server's call limits and clocks through forward-call.ts, tracked on its slot, a lost login turning
 * the server to needs-login; any other request with its era's rules (what the caller can answer
 * told to a 2026 server, the methods that revision removed not sent, resource subscriptions kept
 * with the server); a failure to reach the server told with its name, a result nested too deep
 * refused.
 */

/** What a request to a server may carry besides its method and params. */
export interface RequestOptions {
  signal?: AbortSignal | undefined;
  /** What the caller can answer, told to a 2026 server with the request. */
  clientCapabilities?: ClientCapabilities | undefined;
}

export interface PoolRequests {
  /** One request on `connection`; a failure to reach the server is told with its name. */
  sendOn<T extends StandardSchemaV1>(
    connection: UpstreamConnection,
    request: { method: string; params?: Record<string, unknown> },
    resultSchema: T,
    requestOptions: RequestOptions,
  ): Promise<StandardSchemaV1.InferOutput<T>>;
  /** A call (tools/call, prompts/get, resources/read) through forward-call.ts, tracked on its server. */
  forwardCall(target: CallTarget, options: CallOptions): Promise<Result>;
  /** Where a plain lane may send a tools/call at once, or undefined (UpstreamPool's `laneTo`). */
  laneTo(server: string): LaneRoute | undefined;
  /** Any other request to a server, connecting it if need be (UpstreamPool's `request`). */
  request<T extends StandardSchemaV1>(
    server: string,
    request: { method: string; params?: Record<string, unknown> },
    resultSchema: T,
    requestOptions?: RequestOptions,
  ): Promise<StandardSchemaV1.InferOutput<T>>;
}

export interface PoolRequestsDeps {
  options: UpstreamPoolOptions;
  lifecycle: SlotLifecycle;
  /** The server's slot, or why it may not be used (gone, disabled, awaiting approval). */
  usableSlot(server: string): Slot;
}

/**
 * A server a plain tools/call may go to past forward-call.ts (server/calls/plain-lane.ts): connected
 * now, over a connection with lean calls (lean-call.ts), usable, with no call limits and no login to wait
 * for. The lane keeps the call's clocks itself and tracks it on the server as forward-call does.
 */
export interface LaneRoute {
  connection: UpstreamConnection;
  limits: CallLimits;
  track(call: ActiveCall): () => void;
}

/** Methods the 2026-07-28 revision removed that a modern server is not sent (see `request`). */
const REMOVED_IN_2026 = new Set(["logging/setLevel", "ping"]);

const isSubscriptionMethod = (method: string): method is SubscriptionMethod =>
  method === "resources/subscribe" || method === "resources/unsubscribe";

const DEFAULT_CALL_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_CALL_MS = 20 * 60_000;

export function createPoolRequests({ options, lifecycle, usableSlot }: PoolRequestsDeps): PoolRequests {
  const { connected, awaitLogin, drop } = lifecycle;

  /** One request on `connection`; a failure to reach the server is told with its name. */
  const sendOn = async <T extends StandardSchemaV1>(
    connection: UpstreamConnection,
    request: { method: string; params?: Record<string, unknown> },
    resultSchema: T,
    requestOptions: RequestOptions,
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

  /** Each slot's way to its server, made once (not per call). */
  const routes = new WeakMap<Slot, CallRoute>();
  const routeOf = (slot: Slot): CallRoute => {
    let route = routes.get(slot);
    if (route) return route;
    route = {
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
    };
    routes.set(slot, route);
    return route;
  };

  const limitsOf = (slot: Slot): CallLimits => ({
    callTimeoutMs: slot.config.callTimeoutMs ?? options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
    maxCallMs: options.maxCallMs ?? DEFAULT_MAX_CALL_MS,
  });

  /** A call (tools/call, prompts/get, resources/read) through forward-call.ts, tracked on its server. */
  const forwardCall = async (target: CallTarget, call: CallOptions): Promise<Result> => {
    const slot = usableSlot(target.server);
    const limits = limitsOf(slot);
    if (slot.state === "needs-login" && !slot.connection && !slot.pending) {
      throw new ProxyError("UPSTREAM_UNAVAILABLE", slot.error ?? `${target.server} needs a login`);
    }
    // Its turn under its call limits first (src/limits/): a refusal says which limit, and when to retry.
    // No call limits: no gate, and no turn to wait for.
    const admission = slot.gate ? await slot.gate.enter(call.signal) : undefined;
    call.onAdmitted?.(admission?.waitedMs ?? 0);
    try {
      return await forwardToolCall(target, call, limits, routeOf(slot));
    } catch (error) {
      // The login ended (revoked, refresh refused): the server waits for a new one.
      if (!isLoginNeeded(error)) throw error;
      const reason = describeError(error);
      const connection = slot.connection;
      awaitLogin(slot, reason);
      void connection?.close();
      throw new ProxyError("UPSTREAM_UNAVAILABLE", reason, { cause: error });
    } finally {
      admission?.release();
    }
  };

  const laneTo = (server: string): LaneRoute | undefined => {
    let slot: Slot;
    try {
      slot = usableSlot(server);
    } catch {
      return undefined; // gone, disabled or held: forward-call.ts says why
    }
    const connection = slot.connection;
    if (!connection?.lean || slot.gate || slot.state !== "connected") return undefined;
    return { connection, limits: limitsOf(slot), track: routeOf(slot).track };
  };

  return {
    sendOn,
    forwardCall,
    laneTo,
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
  };
}
