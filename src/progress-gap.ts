/**
 * How a response is paced after a progress notice on a stdio connection to a client: clients built
 * on the SDK (v1 and v2) handle the lines of one read in one synchronous loop, a notice's handler a
 * microtask later, and forget a request's progress handler when its response is read. A notice read
 * in the same chunk as the response is dropped; a response held this long after the last notice
 * lets the client read the notice first. The stdio server and the stdio bridge both pace by it.
 */
const PROGRESS_GAP_MS = 10;

export interface ProgressGap {
  /** How long `message` must wait before it is written, in ms (0: at once); notes a progress notice. */
  waitBefore(message: object): number;
}

export function createProgressGap(): ProgressGap {
  let lastProgressAt = Number.NEGATIVE_INFINITY;
  return {
    waitBefore(message) {
      const { method } = message as { method?: unknown };
      if (method === undefined) return Math.max(0, lastProgressAt + PROGRESS_GAP_MS - performance.now());
      if (method === "notifications/progress") lastProgressAt = performance.now();
      return 0;
    },
  };
}
