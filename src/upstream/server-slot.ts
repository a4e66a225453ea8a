import { isLoginNeeded } from "../auth/oauth-provider.ts";
import { describeError, ProxyError } from "../errors.ts";
import { launchRefusal } from "../security/launch-spec.ts";
import type { EraStore } from "../store/sqlite/era-store.ts";
import type { ConnectOutcome, UpstreamPoolOptions } from "./pool-types.ts";
import { checkPort } from "./port-check.ts";
import { isProxyLoopFailure } from "./proxy-ancestry.ts";
import { relayTo } from "./relay-routing.ts";
import {
  backoffDelay,
  CIRCUIT_THRESHOLD,
  failuresAfterClose,
  isCircuitOpen,
  type RetryPolicy,
} from "./restart-policy.ts";
import { type Slot, slotSetter } from "./slot.ts";
import { connectUpstream, type UpstreamConnection } from "./upstream-connection.ts";

/**
 * A configured server's life in the pool (its slot: slot.ts): started once however many paths ask
 * (single flight), retried with backoff and a circuit after failures (restart-policy.ts), waiting
 * for a login when its authorization ended, dropped when its session is lost, retired when the
 * config removes or changes it. The pool (upstream-pool.ts) keeps the slots and sends through them.
 */

export interface SlotLifecycle {
  /** The server's one live connection, made when there is none. */
  connect(slot: Slot): Promise<UpstreamConnection>;
  /** `connect`, or the reason at once while the circuit is open, as an UPSTREAM_UNAVAILABLE error. */
  connected(slot: Slot): Promise<UpstreamConnection>;
  /** What starting the slot came to, for connectAll and connectServer (never throws). */
  outcomeOf(slot: Slot): Promise<ConnectOutcome>;
  retire(slot: Slot): Promise<void>;
  awaitLogin(slot: Slot, reason: string): void;
  drop(slot: Slot, connection: UpstreamConnection, reason: string): Promise<void>;
  /** Failed slots are tried again under `policy` from now on. */
  startRetrying(policy: RetryPolicy, slots: Iterable<Slot>): void;
  isClosed(): boolean;
  closeAll(slots: Iterable<Slot>): Promise<void>;
}

export function createSlotLifecycle(
  options: UpstreamPoolOptions,
  eras: EraStore,
  /** Told after every change to a slot's state or connection (pool-states.ts keeps what it needs). */
  onChanged: (slot: Slot) => void,
): SlotLifecycle {
  let isClosed = false;
  const setSlot = slotSetter(onChanged);
  // Aborted at close: connects still under way stop their children instead of leaving them running.
  const closing = new AbortController();
  let retry: RetryPolicy | undefined;

  const scheduleRetry = (slot: Slot) => {
    if (
      !retry ||
      isClosed ||
      slot.retryTimer ||
      slot.state === "disabled" ||
      slot.config.awaitingApproval ||
      slot.isRefused ||
      slot.isRetired
    )
      return;
    const delay = backoffDelay(retry, slot.failures, Date.now() - (slot.downSince ?? Date.now()));
    slot.retryAt = Date.now() + delay;
    if (slot.failures === CIRCUIT_THRESHOLD) {
      options.logger
        .child(slot.config.name)
        .warn(
          `circuit open after ${slot.failures} failures in a row: calls fail at once; next try in ${Math.round(delay / 1000)} s`,
        );
    }
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
    slot.retryAt = undefined;
    slot.attempts++;
    const isReconnect = slot.attempts > 1;
    setSlot(slot, { state: isReconnect ? "restarting" : "connecting" });
    const log = options.logger.child(slot.config.name);
    let mine: UpstreamConnection | undefined;
    // A retry of a server that failed tries its port first: a dead one fails before any client, or
    // its OAuth store, is made (thousands of configured servers may be down; port-check.ts).
    const attempt = (slot.failures > 0 ? checkPort(slot.config) : Promise.resolve())
      .then(() =>
        connectUpstream(slot.config, {
          ...(options.env ? { env: options.env } : {}),
          ...(options.ancestry ? { ancestry: options.ancestry } : {}),
          ...(options.maxResultBytes ? { maxResultBytes: options.maxResultBytes } : {}),
          ...(options.maxTools ? { maxTools: options.maxTools } : {}),
          ...(options.maxToolListBytes ? { maxToolListBytes: options.maxToolListBytes } : {}),
          ...(options.healthCheckMs ? { healthCheckMs: options.healthCheckMs } : {}),
          signal: closing.signal,
          stopSignal: options.stopSignal,
          eras,
          ...(options.clientSide ? relayTo(options.clientSide, slot) : {}),
          authProvider: options.auth?.providerFor(slot.config),
          resourceSubscriptions: () => slot.subscriptions.uris(),
          onToolsChanged: (tools) => {
            slot.toolCount = tools.length;
            log.info(`tool list changed (${tools.length} tools)`);
            options.onToolsChanged?.(slot.config.name, tools);
          },
          onListFailed: (reason) =>
            log.warn(`listing its tools again failed; the previous list stays: ${reason}`),
          onClosed: (reason) => {
            // Only this attempt's own connection: a late close of one already replaced must not drop its successor.
            if (!mine || slot.connection !== mine) return;
            const lived = Date.now() - (slot.connectedSince ?? 0);
            setSlot(slot, { state: "failed", error: reason, connection: undefined });
            slot.failures = failuresAfterClose(slot.failures, lived);
            if (!isClosed) log.warn(`disconnected after ${Math.round(lived / 1000)} s: ${reason}`);
            scheduleRetry(slot);
          },
        }),
      )
      .then(
        async (connection) => {
          if (isClosed || slot.isRetired) {
            await connection.close();
            throw new ProxyError(
              "UPSTREAM_UNAVAILABLE",
              isClosed
                ? "the proxy is shutting down"
                : `${slot.config.name} was removed or changed in the config`,
            );
          }
          mine = connection;
          options.instructions?.put(slot.config.name, connection.instructions);
          setSlot(slot, {
            connection,
            state: "connected",
            error: undefined,
            connectedSince: Date.now(),
            toolCount: connection.tools.length,
          });
          log.info(`${isReconnect ? "reconnected" : "connected"} (${connection.tools.length} tools)`);
          if (connection.skipped.length > 0) {
            log.warn(
              `left out ${connection.skipped.length} malformed tools: ${connection.skipped.join(", ")}`,
            );
          }
          // A lazy server's first connection comes from a call, not from an indexing pass: what it
          // lists is reviewed (pinned) as a reconnect's is, not taken on trust.
          if (isReconnect || slot.config.lazy) {
            options.onToolsChanged?.(slot.config.name, connection.tools, connection.listed);
          }
          slot.subscriptions.restore(connection);
          return connection;
        },
        (error: unknown) => {
          const reason = describeError(error);
          if (isLoginNeeded(error)) {
            awaitLogin(slot, reason);
            throw error;
          }
          setSlot(slot, { connection: undefined, state: "failed", error: reason });
          if (isProxyLoopFailure(reason)) {
            slot.isRefused = true;
            const refused = `this server is mcpproxy with a config already running up the chain (a proxy loop), so it is not started again: ${reason}`;
            setSlot(slot, { error: refused });
            log.error(refused);
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

  const outcomeOf = async (slot: Slot): Promise<ConnectOutcome> => {
    const refusal = launchRefusal(slot.config);
    if (refusal) {
      return {
        server: slot.config.name,
        error: refusal,
        ...(slot.config.awaitingApproval ? { awaitingApproval: true } : {}),
        ...(slot.config.configProblem ? { notStarted: true } : {}),
      };
    }
    try {
      const connection = await connect(slot);
      return {
        server: slot.config.name,
        tools: connection.tools,
        skipped: connection.skipped,
        listed: connection.listed,
      };
    } catch (error) {
      if (isClosed) return { server: slot.config.name, error: describeError(error), stopped: true };
      return { server: slot.config.name, error: slot.isRefused ? slot.error : describeError(error) };
    }
  };

  /** Stops everything of a slot leaving the pool; its calls in flight end with the connection. */
  const retire = async (slot: Slot) => {
    slot.isRetired = true;
    clearTimeout(slot.retryTimer);
    slot.stopWatching?.();
    const { connection, pending } = slot;
    setSlot(slot, { connection: undefined });
    await Promise.allSettled([connection?.close(), pending]);
  };

  /** Until someone logs in, the server is not tried again; the login connects it. */
  const awaitLogin = (slot: Slot, reason: string) => {
    const log = options.logger.child(slot.config.name);
    if (slot.state !== "needs-login") log.warn(reason);
    setSlot(slot, { connection: undefined, state: "needs-login", error: reason });
    slot.stopWatching?.();
    slot.stopWatching = options.auth?.watchLogin(slot.config, () => {
      slot.stopWatching = undefined;
      if (isClosed) return;
      log.info("login changed; connecting");
      connect(slot).catch(() => undefined);
    });
  };

  /** Drops a connection that stopped working (its session is gone); the next connect() makes a new one. */
  const drop = async (slot: Slot, connection: UpstreamConnection, reason: string) => {
    if (slot.connection !== connection) return;
    setSlot(slot, { connection: undefined, state: "restarting", error: reason });
    options.logger.child(slot.config.name).info(`${reason}; opening a new session`);
    await connection.close();
  };

  /** The slot's connection, started if need be; with the circuit open, the reason at once instead. */
  const connected = async (slot: Slot): Promise<UpstreamConnection> => {
    if (!slot.connection && !slot.pending && slot.retryTimer && isCircuitOpen(slot.failures)) {
      const at = new Date(slot.retryAt ?? Date.now()).toISOString();
      throw new ProxyError(
        "UPSTREAM_UNAVAILABLE",
        `Server ${slot.config.name} is down: its last ${slot.failures} starts failed (${slot.error ?? "unknown error"}). ` +
          `The proxy tries it again at ${at}; call again after that.`,
      );
    }
    try {
      return await connect(slot);
    } catch (error) {
      throw new ProxyError(
        "UPSTREAM_UNAVAILABLE",
        `Server ${slot.config.name} is not connected and ${slot.attempts > 1 ? "reconnecting" : "connecting"} failed: ${describeError(error)}`,
        { cause: error },
      );
    }
  };

  /** Stops retries, login watches and connects under way, and closes every live connection. */
  const closeAll = async (slots: Iterable<Slot>) => {
    isClosed = true;
    closing.abort();
    const all = [...slots];
    for (const slot of all) {
      clearTimeout(slot.retryTimer);
      slot.stopWatching?.();
    }
    const connections = all.flatMap((slot) => (slot.connection ? [slot.connection] : []));
    const pending = all.flatMap((slot) => (slot.pending ? [slot.pending] : []));
    await Promise.allSettled([...connections.map((connection) => connection.close()), ...pending]);
  };

  return {
    connect,
    connected,
    outcomeOf,
    retire,
    awaitLogin,
    drop,
    startRetrying(policy, slots) {
      retry = policy;
      for (const slot of slots) if (slot.state === "failed") scheduleRetry(slot);
    },
    isClosed: () => isClosed,
    closeAll,
  };
}
