import { hasHits, type RetrieveToolsAnswer } from "./search-answer.ts";

/**
 * retrieve_tools while servers are still connecting. The answer comes from what is indexed now
 * (the saved index and the servers that are ready) and names the servers still connecting, so one
 * slow server does not hold up an answer another server already has. On a first run, with nothing
 * saved, a search waits for the first indexing pass (at most its bound), but once what is indexed
 * gives hits, only FIRST_ANSWER_GRACE_MS more: servers that start together mostly finish together,
 * and a slow one is named instead of waited for.
 */
interface ConnectingServers {
  /** The first of them, in the config's order. */
  servers: string[];
  /** How many are still starting in all. */
  count: number;
  hint: string;
}

/**
 * How many of the servers still starting an answer names: during a first pass over thousands of
 * servers, naming them all made every answer hundreds of kilobytes to build, send and read.
 */
export const MAX_NAMED_CONNECTING = 20;

const CONNECTING_HINT =
  "These servers are still starting: tools they did not list before are not in this answer yet. " +
  "If none of the tools here fits, ask again in a few seconds.";

/** How often a waiting search looks whether more tools were indexed. */
const RECHECK_MS = 50;
/** On a first run, how much longer a search that has hits waits for the servers still connecting. */
const FIRST_ANSWER_GRACE_MS = 1_000;

export async function searchWhileConnecting<T extends RetrieveToolsAnswer>(options: {
  /** One answer: a list, or a batch of lists (search-answer.ts). */
  search: () => Promise<T>;
  /** Settles when the first indexing pass is over (or its bound); set on a first run only. */
  firstIndexing?: Promise<unknown> | undefined;
  /** How many tools are indexed now. */
  indexedTools: () => number;
  /** The servers still making their first connection (kept by the pool: asking costs nothing per server). */
  connecting: () => readonly string[];
}): Promise<T> {
  const { firstIndexing } = options;
  let isSettled = !firstIndexing;
  void firstIndexing?.then(() => {
    isSettled = true;
  });
  let result: T;
  let firstHitAt: number | undefined;
  const isGraceOver = () =>
    firstHitAt !== undefined && performance.now() - firstHitAt >= FIRST_ANSWER_GRACE_MS;
  for (;;) {
    const indexed = options.indexedTools();
    result = await options.search();
    if (isSettled) break;
    if (hasHits(result)) firstHitAt ??= performance.now();
    if (isGraceOver()) break;
    // Searched again once more tools are indexed, the pass is over, or the grace ends.
    while (!isSettled && !isGraceOver() && options.indexedTools() === indexed) {
      await Promise.race([firstIndexing, Bun.sleep(RECHECK_MS)]);
    }
  }
  const connecting = options.connecting();
  if (connecting.length > 0) {
    result.connecting = {
      servers: connecting.slice(0, MAX_NAMED_CONNECTING),
      count: connecting.length,
      hint: CONNECTING_HINT,
    } satisfies ConnectingServers;
  }
  return result;
}
