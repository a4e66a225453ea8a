import { type CallToolResult, CallToolResultSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ServerConfig } from "../config/load-config.ts";
import { describeError, ProxyError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { connectUpstream, type UpstreamConnection } from "./upstream-connection.ts";

/**
 * All upstream servers, connected in parallel. Each server is on its own: one that fails to
 * start, hangs or dies is reported with its name, reason and stderr and never holds up another.
 * A server that is down when a call arrives is reconnected once, on demand; with retrying on
 * (`serve`), failed and dead servers are also retried in the background with exponential backoff.
 */
export type ServerState = "connecting" | "connected" | "failed" | "disabled";

export interface ServerStatus {
  name: string;
  state: ServerState;
  transport: ServerConfig["transport"];
  toolCount: number;
  error?: string | undefined;
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
}

interface Slot {
  config: ServerConfig;
  state: ServerState;
  connection?: UpstreamConnection | undefined;
  pending?: Promise<UpstreamConnection> | undefined;
  error?: string | undefined;
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
  let retry: RetryPolicy | undefined;

  const scheduleRetry = (slot: Slot) => {
    if (!retry || isClosed || slot.retryTimer || slot.state === "disabled") return;
    const delay = Math.min(retry.maxDelayMs, retry.initialDelayMs * 2 ** Math.max(0, slot.failures - 1));
    slot.retryTimer = setTimeout(() => {
      slot.retryTimer = undefined;
      connect(slot).catch(() => undefined); // a failure schedules the next try
    }, delay);
    slot.retryTimer.unref?.();
  };

  const connect = (slot: Slot): Promise<UpstreamConnection> => {
    if (slot.pending) return slot.pending;
    slot.state = "connecting";
    slot.attempts++;
    const isReconnect = slot.attempts > 1;
    const log = options.logger.child(slot.config.name);
    const attempt = connectUpstream(slot.config, {
      ...(options.env ? { env: options.env } : {}),
      onToolsChanged: (tools) => {
        slot.toolCount = tools.length;
        log.info(`tool list changed (${tools.length} tools)`);
        options.onToolsChanged?.(slot.config.name, tools);
      },
      onClosed: (reason) => {
        slot.state = "failed";
        slot.error = reason;
        slot.connection = undefined;
        if (!isClosed) log.warn(`disconnected: ${reason}`);
        scheduleRetry(slot);
      },
    }).then(
      async (connection) => {
        if (isClosed) {
          await connection.close();
          throw new ProxyError("UPSTREAM_UNAVAILABLE", "the proxy is shutting down");
        }
        Object.assign(slot, {
          connection,
          state: "connected",
          error: undefined,
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
        Object.assign(slot, { connection: undefined, state: "failed", error: describeError(error) });
        slot.failures++;
        if (isReconnect) log.debug(`reconnecting failed: ${describeError(error)}`);
        scheduleRetry(slot);
        throw error;
      },
    );
    slot.pending = attempt.finally(() => {
      slot.pending = undefined;
    });
    return slot.pending;
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
          outcome = { server: slot.config.name, error: describeError(error) };
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
      const slot = slots.get(server);
      if (!slot) {
        throw new ProxyError(
          "UPSTREAM_UNAVAILABLE",
          `Server ${server} is not in the configuration any more.`,
        );
      }
      if (slot.state === "disabled") {
        throw new ProxyError("UPSTREAM_UNAVAILABLE", `Server ${server} is disabled in the configuration.`);
      }
      let connection = slot.connection;
      if (!connection) {
        try {
          connection = await connect(slot);
        } catch (error) {
          throw new ProxyError(
            "UPSTREAM_UNAVAILABLE",
            `Server ${server} is not connected and reconnecting failed: ${describeError(error)}`,
            { cause: error },
          );
        }
      }
      // A raw tools/call, not client.callTool: the result goes back to the agent exactly as the
      // upstream sent it, without the client-side output-schema checks of the SDK.
      return (await connection.client.request(
        { method: "tools/call", params: { name: tool, ...(args ? { arguments: args } : {}) } },
        CallToolResultSchema,
        { timeout: options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS, ...(signal ? { signal } : {}) },
      )) as CallToolResult;
    },

    status() {
      return [...slots.values()].map((slot) => ({
        name: slot.config.name,
        state: slot.state,
        transport: slot.config.transport,
        toolCount: slot.toolCount,
        ...(slot.error ? { error: slot.error } : {}),
      }));
    },

    startRetrying(policy = DEFAULT_RETRY_POLICY) {
      retry = policy;
      for (const slot of slots.values()) if (slot.state === "failed") scheduleRetry(slot);
    },

    async close() {
      isClosed = true;
      for (const slot of slots.values()) clearTimeout(slot.retryTimer);
      const connections = [...slots.values()].flatMap((slot) => (slot.connection ? [slot.connection] : []));
      await Promise.allSettled(connections.map((connection) => connection.close()));
    },
  };
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
