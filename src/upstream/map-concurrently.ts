/**
 * How many servers connect at once. Unbounded, 2,000 configured servers meant 2,000 spawns or
 * sockets in flight together, which starved the first answers of a starting proxy and its memory;
 * a hung server still holds only one of these slots until its own timeout.
 */
export const CONNECT_CONCURRENCY = 32;

/** `Promise.all(items.map(work))` with at most `limit` pieces of work running; results keep their order. */
export async function mapConcurrently<T, R>(
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
