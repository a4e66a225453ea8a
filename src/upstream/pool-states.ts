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
  /**
   * A number that moves whenever a slot joins or leaves `live`, or a live slot changes (a new
   * connection, another time it connected since): equal numbers, the same live servers.
   */
  liveVersion(): number;
}

/** What makes a slot count as starting: connecting, reconnecting, or not started yet without being lazy. */
function isStartingSlot(slot: Slot): boolean {
  return (
    slot.state === "connecting" ||
    slot.state === "restarting" ||
    (slot.state === "configured" && !slot.config.lazy)
  );
}

/**
 * A set of slots kept in the pool's order as it changes: a slot joining is put in its place (at the
 * end, as the pool's slots join in its order, else by a binary search and a splice), never sorted
 * again; one leaving is only let go of, and those gone are dropped in one pass at the next read.
 * While thousands of servers start, the set changes between any two searches, and each search asks
 * for it; a splice per slot leaving was most of what the pass itself cost the one thread.
 */
function orderedSet() {
  const members = new Set<Slot>();
  const ordered: Slot[] = [];
  /** Their servers' names, place for place: a copy of these is what `connecting` answers, not a walk. */
  const names: string[] = [];
  /** The slots in `ordered`, members or not yet dropped. */
  const placed = new Set<Slot>();
  /** How many slots in `ordered` are no longer members. */
  let gone = 0;
  /** Drops the slots that left, in one pass. */
  const settle = () => {
    if (gone === 0) return;
    let kept = 0;
    for (let i = 0; i < ordered.length; i++) {
      const slot = ordered[i]!;
      if (!members.has(slot)) {
        placed.delete(slot);
        continue;
      }
      ordered[kept] = slot;
      names[kept] = names[i]!;
      kept++;
    }
    ordered.length = kept;
    names.length = kept;
    gone = 0;
  };
  /** The first place whose slot comes after `seq` (a slot with the same place goes after those already in). */
  const after = (seq: number) => {
    let low = 0;
    let high = ordered.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (ordered[middle]!.seq <= seq) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  return {
    /** Whether the set changed. */
    keep(slot: Slot, isIn: boolean): boolean {
      if (isIn === members.has(slot)) return false;
      if (!isIn) {
        members.delete(slot);
        gone++;
        return true;
      }
      members.add(slot);
      // One that left and comes back before the next read is still in its place.
      if (placed.has(slot)) {
        gone--;
        return true;
      }
      placed.add(slot);
      if (ordered.length === 0 || ordered[ordered.length - 1]!.seq <= slot.seq) {
        ordered.push(slot);
        names.push(slot.config.name);
      } else {
        const at = after(slot.seq);
        ordered.splice(at, 0, slot);
        names.splice(at, 0, slot.config.name);
      }
      return true;
    },
    size: () => members.size,
    inOrder: (): readonly Slot[] => {
      settle();
      return ordered;
    },
    /** The names in order, as a copy (a memory copy: the walk that made them cost a search at 100,000 tools a millisecond). */
    names: (): readonly string[] => {
      settle();
      return names.slice();
    },
  };
}

export function createPoolStates(): PoolStates {
  const connecting = orderedSet();
  // Only counted: no order to keep.
  const starting = new Set<Slot>();
  const live = orderedSet();
  let connectingNames: readonly string[] | undefined;
  let liveVersion = 0;
  return {
    track(slot) {
      const isHere = !slot.isRetired;
      if (connecting.keep(slot, isHere && slot.state === "connecting")) connectingNames = undefined;
      if (isHere && isStartingSlot(slot)) starting.add(slot);
      else starting.delete(slot);
      const isLive = isHere && slot.connection !== undefined;
      // A live slot told of a change may have a new connection: counted as a change too.
      if (live.keep(slot, isLive) || isLive) liveVersion++;
    },
    connecting: () => {
      if (connecting.size() === 0) return [];
      connectingNames ??= connecting.names();
      return connectingNames;
    },
    isStarting: () => starting.size > 0,
    live: () => (live.size() === 0 ? [] : [...live.inOrder()]),
    liveVersion: () => liveVersion,
  };
}
