/**
 * How many servers connect at once. Unbounded, 2,000 configured servers meant 2,000 spawns or
 * sockets in flight together, which starved the first answers of a starting proxy and its memory;
 * a hung server still holds only one of these slots until its own timeout.
 */
export const CONNECT_CONCURRENCY = 32;

/**
 * `Promise.all(items.map(work))` with at most `limit` pieces of work running; results keep their
 * order. With `turn`, each of the `limit` workers (0-based) asks before it takes its next item, and
 * waits when that returns a promise (client-priority.ts: fewer connects while clients ask).
 */
export async function mapConcurrently<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
  turn?: (worker: number) => Promise<void> | undefined,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (_: unknown, index: number) => {
    while (next < items.length) {
      const waiting = turn?.(index);
      if (waiting) {
        await waiting;
        continue; // another worker may have taken the rest meanwhile
      }
      const at = next++;
      results[at] = await work(items[at]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
