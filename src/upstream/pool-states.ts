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
  /** The servers still making their first connection (the same array until that changes). */
  connecting(): readonly string[];
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

/** A set of slots and, made when first asked for after a change, its slots in the pool's order. */
function orderedSet() {
  const slots = new Set<Slot>();
  let ordered: Slot[] | undefined;
  return {
    /** Whether the set changed. */
    keep(slot: Slot, isIn: boolean): boolean {
      if (isIn === slots.has(slot)) return false;
      if (isIn) slots.add(slot);
      else slots.delete(slot);
      ordered = undefined;
      return true;
    },
    size: () => slots.size,
    // Sorted once per change, not per question: while thousands of servers start, every search asks.
    inOrder: (): readonly Slot[] => {
      ordered ??= [...slots].sort((a, b) => a.seq - b.seq);
      return ordered;
    },
  };
}

export function createPoolStates(): PoolStates {
  const connecting = orderedSet();
  const starting = orderedSet();
  const live = orderedSet();
  let connectingNames: readonly string[] | undefined;
  return {
    track(slot) {
      const isHere = !slot.isRetired;
      if (connecting.keep(slot, isHere && slot.state === "connecting")) connectingNames = undefined;
      starting.keep(slot, isHere && isStartingSlot(slot));
      live.keep(slot, isHere && slot.connection !== undefined);
    },
    connecting: () => {
      if (connecting.size() === 0) return [];
      connectingNames ??= connecting.inOrder().map((slot) => slot.config.name);
      return connectingNames;
    },
    isStarting: () => starting.size() > 0,
    live: () => (live.size() === 0 ? [] : [...live.inOrder()]),
  };
}
