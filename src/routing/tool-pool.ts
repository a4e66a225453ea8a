/**
 * The tools registered in one client session (dynamic routing), at most `limit` of them. When a
 * search brings in more, the registered tools with the lowest priority leave first:
 *   priority = 0.7 · score + 0.3 · freshness,   freshness = 1 − min(1, age_s / 1800)
 * where `score` is the tool's last search score (0–1) and its age counts from when it was last
 * retrieved or called. The tools of the search that caused the eviction are never its victims
 * (they are why it happened); when a search alone brings more than `limit`, its best ones stay.
 */
interface PooledTool<D> {
  name: string;
  score: number;
  /** When it was last retrieved or called (ms). */
  touchedAt: number;
  /** The catalog hash of the definition it was registered with, to notice upstream changes. */
  hash: string;
  definition: D;
}

export interface PoolChange {
  added: string[];
  removed: string[];
}

const SCORE_WEIGHT = 0.7;
const FRESHNESS_WEIGHT = 0.3;
const FRESHNESS_WINDOW_S = 1800;

export function priority(tool: { score: number; touchedAt: number }, now: number): number {
  const ageS = Math.max(0, now - tool.touchedAt) / 1000;
  return SCORE_WEIGHT * tool.score + FRESHNESS_WEIGHT * (1 - Math.min(1, ageS / FRESHNESS_WINDOW_S));
}

export interface ToolPool<D> {
  readonly size: number;
  has(name: string): boolean;
  list(): readonly PooledTool<D>[];
  /** Registers or refreshes a search's tools and evicts down to the limit. */
  offer(tools: readonly Omit<PooledTool<D>, "touchedAt">[]): PoolChange;
  /** A call refreshes a tool's age. */
  touch(name: string): void;
  /** Replaces the definition of a tool whose upstream changed it. */
  update(name: string, hash: string, definition: D): void;
  remove(names: readonly string[]): string[];
}

export function createToolPool<D>(limit: number, now: () => number = Date.now): ToolPool<D> {
  const tools = new Map<string, PooledTool<D>>();
  return {
    get size() {
      return tools.size;
    },
    has: (name) => tools.has(name),
    list: () => [...tools.values()],
    offer(offered) {
      const at = now();
      const batch = [...offered].sort((a, b) => b.score - a.score).slice(0, limit);
      const inBatch = new Set(batch.map((tool) => tool.name));
      const added: string[] = [];
      for (const tool of batch) {
        if (!tools.has(tool.name)) added.push(tool.name);
        tools.set(tool.name, { ...tool, touchedAt: at });
      }
      const removed: string[] = [];
      if (tools.size > limit) {
        const candidates = [...tools.values()]
          .filter((tool) => !inBatch.has(tool.name))
          .sort((a, b) => priority(a, at) - priority(b, at));
        for (const victim of candidates.slice(0, tools.size - limit)) {
          tools.delete(victim.name);
          removed.push(victim.name);
        }
      }
      return { added, removed };
    },
    touch(name) {
      const tool = tools.get(name);
      if (tool) tool.touchedAt = now();
    },
    update(name, hash, definition) {
      const tool = tools.get(name);
      if (tool) Object.assign(tool, { hash, definition });
    },
    remove(names) {
      return names.filter((name) => tools.delete(name));
    },
  };
}
