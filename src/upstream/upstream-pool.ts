import { type CallToolResult, CallToolResultSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ServerConfig } from "../config/parse-server.ts";
import { describeError, ProxyError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { isProxyLoopFailure } from "./proxy-ancestry.ts";
import {
  connectUpstream,
  isConnectionRefused,
  isSessionLost,
  type UpstreamConnection,
} from "./upstream-connection.ts";

/**
 * All upstream servers, connected in parallel. Each server is on its own: one that fails to
 * start, hangs or dies is reported with its name, reason and stderr and never holds up another.
 * A server that is down when a call arrives is reconnected once, on demand; with retrying on
 * (`serve`), failed and dead servers are also retried in the background with exponential backoff.
 */
export type ServerState = "connecting" | "connected" | "restarting" | "failed" | "disabled";

export interface ServerStatus {
  name: string;
  state: ServerState;
  transport: ServerConfig["transport"];
  toolCount: number;
  /** Why it is not connected (failed, restarting), or why it last failed while it reconnects. */
  error?: string | undefined;
  /** When the current connection was made (ms since the epoch). */
  connectedSince?: number | undefined;
}

export interface ConnectOutcome {
  server: string;
  tools?: readonly Tool[] | undefined;
  /** Malformed tools/list entries that were left out. */
  skipped?: readonly string[] | undefined;
  error?: string | undefined;
}

export interface UpstreamPool {
  /** Connects every enabled server; `onOutcome` hears about each as soon as it settles. */
  connectAll(onOutcome?: (outcome: ConnectOutcome) => void | Promise<void>): Promise<ConnectOutcome[]>;
  callTool(
    server: string,
    tool: string,
    args: Record<string, unknown> | undefined,
    signal?: AbortSignal,
  ): Promise<CallToolResult>;
  status(): ServerStatus[];
  /** From now on, retry every failed or disconnected server in the background until it connects. */
  startRetrying(policy?: RetryPolicy): void;
  close(): Promise<void>;
}

export interface RetryPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { initialDelayMs: 5_000, maxDelayMs: 300_000 };

export interface UpstreamPoolOptions {
  servers: readonly ServerConfig[];
  logger: Logger;
  /**
   * A server's tools may have changed: it sent `notifications/tools/list_changed`, or it connected
   * again after a failure (its list is then fresh). Not called for a server's first connection.
   */
  onToolsChanged?: (server: string, tools: readonly Tool[]) => void;
  env?: Readonly<Record<string, string | undefined>>;
  callTimeoutMs?: number;
  /** The proxy chain passed to every server (see proxy-ancestry.ts). */
  ancestry?: string;
  /** The longest message accepted from a stdio server, in bytes. */
  maxResultBytes?: number;
}

interface Slot {
  config: ServerConfig;
  state: ServerState;
  connection?: UpstreamConnection | undefined;
  pending?: Promise<UpstreamConnection> | undefined;
  error?: string | undefined;
  connectedSince?: number | undefined;
  /** Set when retrying cannot help (the server is this proxy itself): never started again. */
  isRefused?: boolean;
  toolCount: number;
  attempts: number;
  /** Failed attempts since the last success, for the backoff. */
  failures: number;
  retryTimer?: ReturnType<typeof setTimeout> | undefined;
}

export const DEFAULT_CALL_TIMEOUT_MS = 300_000;

export function createUpstreamPool(options: UpstreamPoolOptions): UpstreamPool {
  const slots = new Map<string, Slot>();
  for (const config of options.servers) {
    slots.set(config.name, {
      config,
      state: config.enabled ? "connecting" : "disabled",
      toolCount: 0,
      attempts: 0,
      failures: 0,
    });
  }
  let isClosed = false;
  // Aborted at close: connects still under way stop their children instead of leaving them running.
  const closing = new AbortController();
  let retry: RetryPolicy | undefined;

  const scheduleRetry = (slot: Slot) => {
    if (!retry || isClosed || slot.retryTimer || slot.state === "disabled" || slot.isRefused) return;
    const delay = backoffDelay(retry, slot.failures);
    slot.retryTimer = setTimeout(() => {
      slot.retryTimer = undefined;
      connect(slot).catch(() => undefined); // a failure schedules the next try
    }, delay);
    slot.retryTimer.unref?.();
  };

  /**
   * The server's one live connection, made when there is none. Single-flight across every path
   * that can start a server (first connect, a call, the background retry, a lost session): two
   * copies of one stdio server would both write its files.
   */
  const connect = (slot: Slot): Promise<UpstreamConnection> => {
    if (slot.connection) return Promise.resolve(slot.connection);
    if (slot.pending) return slot.pending;
    if (slot.isRefused) {
      return Promise.reject(new ProxyError("UPSTREAM_UNAVAILABLE", slot.error ?? "the server is refused"));
    }
    clearTimeout(slot.retryTimer);
    slot.retryTimer = undefined;
    slot.attempts++;
    const isReconnect = slot.attempts > 1;
    slot.state = isReconnect ? "restarting" : "connecting";
    const log = options.logger.child(slot.config.name);
    let mine: UpstreamConnection | undefined;
    const attempt = connectUpstream(slot.config, {
      ...(options.env ? { env: options.env } : {}),
      ...(options.ancestry ? { ancestry: options.ancestry } : {}),
      ...(options.maxResultBytes ? { maxResultBytes: options.maxResultBytes } : {}),
      signal: closing.signal,
      onToolsChanged: (tools) => {
        slot.toolCount = tools.length;
        log.info(`tool list changed (${tools.length} tools)`);
        options.onToolsChanged?.(slot.config.name, tools);
      },
      onClosed: (reason) => {
        // Only this attempt's own connection: a late close of one already replaced must not drop its successor.
        if (!mine || slot.connection !== mine) return;
        Object.assign(slot, { state: "failed", error: reason, connection: undefined });
        if (!isClosed) log.warn(`disconnected: ${reason}`);
        scheduleRetry(slot);
      },
    }).then(
      async (connection) => {
        if (isClosed) {
          await connection.close();
          throw new ProxyError("UPSTREAM_UNAVAILABLE", "the proxy is shutting down");
        }
        mine = connection;
        Object.assign(slot, {
          connection,
          state: "connected",
          error: undefined,
          connectedSince: Date.now(),
          toolCount: connection.tools.length,
          failures: 0,
        });
        log.info(`${isReconnect ? "reconnected" : "connected"} (${connection.tools.length} tools)`);
        if (connection.skipped.length > 0) {
          log.warn(`left out ${connection.skipped.length} malformed tools: ${connection.skipped.join(", ")}`);
        }
        if (isReconnect) options.onToolsChanged?.(slot.config.name, connection.tools);
        return connection;
      },
      (error: unknown) => {
        const reason = describeError(error);
        Object.assign(slot, { connection: undefined, state: "failed", error: reason });
        if (isProxyLoopFailure(reason)) {
          slot.isRefused = true;
          slot.error = `this server is mcpproxy with a config already running up the chain (a proxy loop), so it is not started again: ${reason}`;
          log.error(slot.error);
        }
        slot.failures++;
        if (isReconnect) log.debug(`reconnecting failed: ${reason}`);
        scheduleRetry(slot);
        throw error;
      },
    );
    slot.pending = attempt.finally(() => {
      slot.pending = undefined;
    });
    return slot.pending;
  };

  /** Drops a connection that stopped working (its session is gone); the next connect() makes a new one. */
  const drop = async (slot: Slot, connection: UpstreamConnection, reason: string) => {
    if (slot.connection !== connection) return;
    Object.assign(slot, { connection: undefined, state: "restarting", error: reason });
    options.logger.child(slot.config.name).info(`${reason}; opening a new session`);
    await connection.close();
  };

  const usableSlot = (server: string): Slot => {
    const slot = slots.get(server);
    if (!slot) {
      throw new ProxyError("UPSTREAM_UNAVAILABLE", `Server ${server} is not in the configuration any more.`);
    }
    if (slot.state === "disabled") {
      throw new ProxyError("UPSTREAM_UNAVAILABLE", `Server ${server} is disabled in the configuration.`);
    }
    return slot;
  };

  const connected = async (slot: Slot): Promise<UpstreamConnection> => {
    try {
      return await connect(slot);
    } catch (error) {
      throw new ProxyError(
        "UPSTREAM_UNAVAILABLE",
        `Server ${slot.config.name} is not connected and reconnecting failed: ${describeError(error)}`,
        { cause: error },
      );
    }
  };

  return {
    async connectAll(onOutcome) {
      const enabled = [...slots.values()].filter((slot) => slot.config.enabled);
      return mapConcurrently(enabled, CONNECT_CONCURRENCY, async (slot): Promise<ConnectOutcome> => {
        let outcome: ConnectOutcome;
        try {
          const connection = await connect(slot);
          outcome = { server: slot.config.name, tools: connection.tools, skipped: connection.skipped };
        } catch (error) {
          outcome = { server: slot.config.name, error: slot.isRefused ? slot.error : describeError(error) };
        }
        try {
          await onOutcome?.(outcome);
        } catch (error) {
          options.logger.error(`handling ${slot.config.name} failed: ${describeError(error)}`);
        }
        return outcome;
      });
    },

    async callTool(server, tool, args, signal) {
      const slot = usableSlot(server);
      // A raw tools/call, not client.callTool: the result goes back to the agent exactly as the
      // upstream sent it, without the client-side output-schema checks of the SDK.
      const send = async (connection: UpstreamConnection) =>
        (await connection.client.request(
          { method: "tools/call", params: { name: tool, ...(args ? { arguments: args } : {}) } },
          CallToolResultSchema,
          { timeout: options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS, ...(signal ? { signal } : {}) },
        )) as CallToolResult;
      const connection = await connected(slot);
      try {
        return await send(connection);
      } catch (error) {
        // The request never reached a live session: open a new one and send it again, once.
        const lost = isSessionLost(error)
          ? "the server no longer knows our session (it restarted or expired it)"
          : isConnectionRefused(error)
            ? "the server refused the connection"
            : undefined;
        if (!lost || signal?.aborted || isClosed) throw error;
        await drop(slot, connection, lost);
        return send(await connected(slot));
      }
    },

    status() {
      return [...slots.values()].map((slot) => ({
        name: slot.config.name,
        state: slot.state,
        transport: slot.config.transport,
        toolCount: slot.toolCount,
        ...(slot.error ? { error: slot.error } : {}),
        ...(slot.connection && slot.connectedSince ? { connectedSince: slot.connectedSince } : {}),
      }));
    },

    startRetrying(policy = DEFAULT_RETRY_POLICY) {
      retry = policy;
      for (const slot of slots.values()) if (slot.state === "failed") scheduleRetry(slot);
    },

    async close() {
      isClosed = true;
      closing.abort();
      for (const slot of slots.values()) clearTimeout(slot.retryTimer);
      const connections = [...slots.values()].flatMap((slot) => (slot.connection ? [slot.connection] : []));
      const pending = [...slots.values()].flatMap((slot) => (slot.pending ? [slot.pending] : []));
      await Promise.allSettled([...connections.map((connection) => connection.close()), ...pending]);
    },
  };
}

/** Exponential backoff with full jitter, so servers that failed together do not retry together. */
export function backoffDelay(policy: RetryPolicy, failures: number, random = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, failures - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * How many servers connect at once. Unbounded, 2,000 configured servers meant 2,000 spawns or
 * sockets in flight together, which starved the first answers of a starting proxy and its memory;
 * a hung server still holds only one of these slots until its own timeout.
 */
const CONNECT_CONCURRENCY = 32;

/** `Promise.all(items.map(work))` with at most `limit` pieces of work running; results keep their order. */
async function mapConcurrently<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await work(items[at]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
