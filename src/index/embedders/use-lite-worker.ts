/**
 * A worker that runs the built-in encoder's graph (use-lite-graph.ts) for the embedder on the main
 * thread (use-lite-embedder.ts): the graph takes tens of milliseconds to seconds a call, which
 * would hold up every search and call of a serve, and a second worker uses the second core.
 *
 * Messages in: `{ ids, lengths }` (one call of texts' token ids). Out: `{ vectors }` or
 * `{ error }`, one for each message in, in order. The graph is loaded on the first message.
 */
import { loadUseLiteGraph, type UseLiteGraph } from "./use-lite-graph.ts";

declare const self: Worker;

export interface GraphRequest {
  ids: Int32Array;
  lengths: Int32Array;
}
export type GraphAnswer = { vectors: Float32Array } | { error: string };

let graph: Promise<UseLiteGraph> | undefined;

/** The graph, and the loading's garbage (the weights' packed and unpacked copies, ~80 MB) collected at once. */
async function load(): Promise<UseLiteGraph> {
  const loaded = await loadUseLiteGraph();
  Bun.gc(true);
  return loaded;
}

self.onmessage = async (event: MessageEvent<GraphRequest>) => {
  try {
    graph ??= load();
    const vectors = await (await graph).run(event.data.ids, event.data.lengths);
    self.postMessage({ vectors } satisfies GraphAnswer, [vectors.buffer]);
  } catch (error) {
    self.postMessage({ error: error instanceof Error ? error.message : String(error) } satisfies GraphAnswer);
  }
};
