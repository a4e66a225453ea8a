import type { ServerConfig } from "../config/parse-server.ts";
import { type CallGate, type CallGateFactory, createCallGate } from "../limits/call-gate.ts";
import { launchRefusal } from "../security/launch-spec.ts";
import { redactSecrets } from "../security/redact-secrets.ts";
import type { ActiveCall } from "./forward-call.ts";
import type { ServerState } from "./pool-types.ts";
import type { UpstreamConnection } from "./upstream-connection.ts";
import type { UpstreamSubscriptions } from "./upstream-subscriptions.ts";

/**
 * One configured server in the pool (a slot): what it is now, and the one way its state, error and
 * connection change (slotSetter). Its life (connects, retries, the circuit) is server-slot.ts's.
 */
export interface Slot {
  config: ServerConfig;
  /** Its place in the pool (the config's order); a slot that replaces another takes its place. */
  seq: number;
  state: ServerState;
  connection?: UpstreamConnection | undefined;
  pending?: Promise<UpstreamConnection> | undefined;
  /** Why it is not connected, redacted as it was stored (setSlot): it is shown as it is. */
  error?: string | undefined;
  connectedSince?: number | undefined;
  /** Set when retrying cannot help (the server is this proxy itself): never started again. */
  isRefused?: boolean;
  toolCount: number;
  attempts: number;
  /** Failed starts (and early crashes) in a row, for the backoff and the circuit. */
  failures: number;
  /** Since when it has been failing, unset while it works: a server long down is tried less often. */
  downSince?: number | undefined;
  retryTimer?: ReturnType<typeof setTimeout> | undefined;
  retryAt?: number | undefined;
  /** Calls in flight, oldest first. */
  active: ActiveCall[];
  /** The client sessions that called the server, latest last (relay-routing.ts). */
  callers: string[];
  /** Stops watching for a login (while `needs-login`). */
  stopWatching?: (() => void) | undefined;
  /** Taken out of the pool (removed or changed in the config): whatever it still starts is stopped. */
  isRetired?: boolean;
  /** The resources it is subscribed to for clients, kept across its connections (and config changes). */
  subscriptions: UpstreamSubscriptions;
  /** Its call limits' door (src/limits/), when it has limits; kept when only the limits change. */
  gate?: CallGate | undefined;
}

export function slotOf(
  config: ServerConfig,
  subscriptions: UpstreamSubscriptions,
  seq: number,
  gateOf: CallGateFactory = createCallGate,
): Slot {
  return {
    config,
    seq,
    error: shownError(launchRefusal(config)),
    state: !config.enabled
      ? "disabled"
      : config.awaitingApproval
        ? "awaiting-approval"
        : config.configProblem
          ? "failed"
          : config.lazy
            ? "configured"
            : "connecting",
    // A variable it needs is not set: retrying cannot help until the config changes.
    isRefused: Boolean(config.configProblem),
    toolCount: 0,
    attempts: 0,
    failures: 0,
    active: [],
    callers: [],
    subscriptions,
    ...(config.limits ? { gate: gateOf(config.name, config.limits) } : {}),
  };
}

/** What a slot's status may show of an error: known secret shapes never are (/health, the status page, agents). */
function shownError(error: string | undefined): string | undefined {
  return error === undefined ? undefined : redactSecrets(error);
}

type SlotChange = Partial<Pick<Slot, "state" | "error" | "connection" | "connectedSince" | "toolCount">>;

/**
 * Every change to a slot's state, error or connection goes through the function this returns: the
 * error is redacted once, as it is stored, instead of each time the status is read; since when the
 * server has been failing is kept (restart-policy.ts tries one long down less often); and the pool
 * hears of the change (pool-states.ts keeps what it is asked on every search).
 */
export function slotSetter(onChanged: (slot: Slot) => void): (slot: Slot, change: SlotChange) => void {
  // Each slot's last error as given and as stored: a server down for hours fails with the same text
  // at every retry, and it is redacted once, not at each.
  const last = new WeakMap<Slot, { given: string; shown: string }>();
  const shownOnce = (slot: Slot, error: string | undefined) => {
    if (error === undefined) return undefined;
    const seen = last.get(slot);
    if (seen?.given === error) return seen.shown;
    const shown = redactSecrets(error);
    last.set(slot, { given: error, shown });
    return shown;
  };
  return (slot, change) => {
    Object.assign(slot, change, "error" in change ? { error: shownOnce(slot, change.error) } : {});
    if (change.state === "connected") slot.downSince = undefined;
    else if (change.state === "failed") slot.downSince ??= Date.now();
    onChanged(slot);
  };
}
