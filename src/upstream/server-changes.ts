import type { ServerConfig } from "../config/parse-server.ts";
import type { CallGateFactory } from "../limits/call-gate.ts";
import type { Slot } from "./slot.ts";

/**
 * A new server list (a config change) applied to the pool's slots: servers gone are retired and
 * dropped, changed ones retired and set up again (keeping their clients' resource subscriptions),
 * new ones added, unchanged ones left alone. A change to how the proxy treats a server's calls only
 * (its limits, fallback, tool overrides) is applied to the running server, which is not restarted.
 */

export interface ServerChanges {
  added: string[];
  removed: string[];
  changed: string[];
}

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

/** What applying a server list needs of the pool. */
export interface SlotMaker {
  /** A slot for `config`, with the subscriptions and the place of the slot it replaces if any. */
  newSlot(config: ServerConfig, replaced?: Slot): Slot;
  /** Stops everything of a slot leaving the pool. */
  retire(slot: Slot): Promise<void>;
  gateOf: CallGateFactory;
}

/** Brings `slots` to `servers`; resolves when the slots taken out have stopped. */
export async function applyServerChanges(
  slots: Map<string, Slot>,
  servers: readonly ServerConfig[],
  { newSlot, retire, gateOf }: SlotMaker,
): Promise<ServerChanges> {
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
      slots.set(name, newSlot(config, slot));
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
}
