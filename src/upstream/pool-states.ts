import type { Slot } from "./slot.ts";

/**
 * What the pool is asked about its servers on every search and every second (which are still
 * connecting, whether any is starting, which are connected), kept as the slots change rather than
 * worked out from every slot per question: with thousands of servers that walk, not the search,
 * was most of what retrieve_tools cost. The pool tells `track` after each change to a slot's state
 * or connection, and the answers come in the pool's order (the config's), as a walk would give them.
 */
export interface PoolStates {
  /** The slot joined the pool or changed (its state, its connection); a retired slot leaves. */
  track(slot: Slot): void;
  /** The servers still making their first connection. */
  connecting(): string[];
  /** Whether a server that should be connected is still starting (a lazy one waits for its first call). */
  isStarting(): boolean;
  /** The slots connected now. */
  live(): Slot[];
}

/** What makes a slot count as starting: connecting, reconnecting, or not started yet without being lazy. */
function isStartingSlot(slot: Slot): boolean {
  return (
    slot.state === "connecting" ||
    slot.state === "restarting" ||
    (slot.state === "configured" && !slot.config.lazy)
  );
}

export function createPoolStates(): PoolStates {
  const connecting = new Set<Slot>();
  const starting = new Set<Slot>();
  const live = new Set<Slot>();
  const keep = (set: Set<Slot>, slot: Slot, isIn: boolean) => {
    if (isIn) set.add(slot);
    else set.delete(slot);
  };
  const inOrder = (set: ReadonlySet<Slot>) => [...set].sort((a, b) => a.seq - b.seq);
  return {
    track(slot) {
      const isHere = !slot.isRetired;
      keep(connecting, slot, isHere && slot.state === "connecting");
      keep(starting, slot, isHere && isStartingSlot(slot));
      keep(live, slot, isHere && slot.connection !== undefined);
    },
    connecting: () => (connecting.size === 0 ? [] : inOrder(connecting).map((slot) => slot.config.name)),
    isStarting: () => starting.size > 0,
    live: () => (live.size === 0 ? [] : inOrder(live)),
  };
}
