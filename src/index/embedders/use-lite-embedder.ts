import { availableParallelism } from "node:os";
import type { Embedder } from "./embedder.ts";
import { createSentencePiece } from "./sentence-piece.ts";
import { readUseLiteVocabulary } from "./use-lite-graph.ts";
import { MAX_TOKENS, MODEL_ID, USE_LITE_ID } from "./use-lite-id.ts";
import { useLiteKnows } from "./use-lite-words.ts";
import type { GraphAnswer, GraphRequest } from "./use-lite-worker.ts";

// The built-in sentence encoder: Universal Sentence Encoder Lite (512 dimensions; its id and cut:
// use-lite-id.ts), from files inside the binary, no network and no model directory. A sentence
// encoder, not averaged words, so it can match a request to a tool that says the same thing in
// other words.
//
// Texts are tokenised here and run by the graph in workers (use-lite-worker.ts), one per core up to
// WORKERS, in calls of texts of like length (TOKENS_PER_CALL): the graph pads every text of a call
// to the longest, so texts in order of length waste almost nothing on padding.

/** Characters read before tokenising, a bound on the tokenizer's work for a huge description. */
const MAX_CHARS = 1_000;
/** Token ids per call of the graph, padding included: enough to keep a worker busy, few enough to share the texts between workers. */
const TOKENS_PER_CALL = 1_024;
/** Workers at most: each holds the graph (about 30 MB of weights) and its own runtime. */
const WORKERS = 2;
/** How long a second worker, and the last, stay idle before they stop and give their memory back. */
const IDLE_MS: IdleTimes = { spare: 5_000, last: 300_000 };

export interface UseLiteOptions {
  /** Another cut than MAX_TOKENS, for experiments (Infinity: the whole text up to MAX_CHARS). */
  maxTokens?: number;
  /** Workers to run the graph in (default: one per core, up to WORKERS). */
  workers?: number;
  /** Other idle times than IDLE_MS (tests). */
  idleMs?: IdleTimes;
}

interface IdleTimes {
  /** A worker stops after this long idle while another is idle too. */
  spare: number;
  /** The last worker stops after this long idle. */
  last: number;
}

/**
 * The worker's script. Inside the compiled binary a worker is named by its entry point's path
 * from the project root (scripts/compile.ts builds it as one); from source, it sits beside this file.
 */
function workerScript(): string {
  const isCompiled = import.meta.url.includes("/$bunfs/") || import.meta.url.includes("~BUN");
  return isCompiled
    ? "./src/index/embedders/use-lite-worker.ts"
    : new URL("./use-lite-worker.ts", import.meta.url).href;
}

/** Bun's Worker, which can stop keeping the process alive (the DOM's declaration, which this project's types follow, cannot). */
type GraphWorker = Worker & { ref(): void; unref(): void };

interface Job {
  request: GraphRequest;
  resolve(vectors: Float32Array): void;
  reject(error: Error): void;
}

/**
 * Workers that each run one call at a time, fed from one queue. A worker is started when a call
 * finds none idle (up to `size`); of two idle workers one stops after `idle.spare` ms, and the
 * last after `idle.last`: indexing gets every core for the time it takes, a serve that only embeds
 * requests keeps one worker's memory, and one left alone gives that back too (the next request
 * loads the graph again, about 0.3 s). Workers keep the process alive only while they have work.
 * A call that fails fails alone; a worker that stops unasked (or cannot start) fails every call
 * given to the pool after it.
 */
function graphPool(size: number, idleMs: IdleTimes) {
  const queue: Job[] = [];
  const idle: GraphWorker[] = [];
  const idleSince = new Map<GraphWorker, number>();
  const running = new Map<GraphWorker, Job>();
  const workers = new Set<GraphWorker>();
  let broken: Error | undefined;

  const fail = (error: Error) => {
    broken ??= error;
    for (const job of [...running.values(), ...queue.splice(0)]) job.reject(broken);
    running.clear();
  };
  /** Stops an idle worker that has waited long enough for its rank, spare or last. */
  const retire = (worker: GraphWorker) => {
    const since = idleSince.get(worker);
    if (since === undefined) return;
    if (performance.now() - since < (idle.length > 1 ? idleMs.spare : idleMs.last)) return;
    idle.splice(idle.indexOf(worker), 1);
    idleSince.delete(worker);
    workers.delete(worker);
    void worker.terminate();
  };
  const rest = (worker: GraphWorker) => {
    idle.push(worker);
    idleSince.set(worker, performance.now());
    worker.unref();
    setTimeout(() => retire(worker), idleMs.spare).unref();
    setTimeout(() => retire(worker), idleMs.last).unref();
  };
  const start = () => {
    const worker = new Worker(workerScript()) as GraphWorker;
    worker.onmessage = (event: MessageEvent<GraphAnswer>) => {
      const job = running.get(worker);
      running.delete(worker);
      rest(worker);
      // A call that failed fails alone; the worker goes on with the next.
      if ("error" in event.data) job?.reject(new Error(event.data.error));
      else job?.resolve(event.data.vectors);
      pump();
    };
    worker.onerror = (event) => fail(new Error(event.message || "the encoder's worker stopped"));
    workers.add(worker);
    return worker;
  };
  const pump = () => {
    while (queue.length > 0) {
      const worker = idle.pop() ?? (workers.size < size ? start() : undefined);
      if (!worker) return;
      idleSince.delete(worker);
      const job = queue.shift()!;
      running.set(worker, job);
      worker.ref();
      worker.postMessage(job.request, [job.request.ids.buffer, job.request.lengths.buffer]);
    }
  };

  return {
    run(request: GraphRequest): Promise<Float32Array> {
      if (broken) return Promise.reject(broken);
      return new Promise((resolve, reject) => {
        queue.push({ request, resolve, reject });
        pump();
      });
    },
    close() {
      fail(new Error("the encoder was closed"));
      for (const worker of workers) void worker.terminate();
      workers.clear();
      idle.length = 0;
      idleSince.clear();
    },
  };
}

export async function loadUseLiteEmbedder(options: UseLiteOptions = {}): Promise<Embedder> {
  const tokenizer = createSentencePiece(readUseLiteVocabulary());
  const maxTokens = options.maxTokens ?? MAX_TOKENS;
  const idsOf = (text: string) => tokenizer.encode(text.slice(0, MAX_CHARS) || " ").slice(0, maxTokens);
  const pool = graphPool(
    options.workers ?? Math.max(1, Math.min(WORKERS, availableParallelism())),
    options.idleMs ?? IDLE_MS,
  );

  /** The texts' ids in calls of like length, run in the pool, the vectors back in the texts' order. */
  const embedIds = async (ids: readonly number[][], onProgress?: (done: number) => void) => {
    const order = ids.map((_, i) => i).sort((a, b) => ids[a]!.length - ids[b]!.length);
    const calls: number[][] = [];
    for (let start = 0; start < order.length; ) {
      let end = start + 1;
      while (end < order.length && (end - start + 1) * ids[order[end]!]!.length <= TOKENS_PER_CALL) end++;
      calls.push(order.slice(start, end));
      start = end;
    }
    const vectors = new Array<Float32Array>(ids.length);
    let done = 0;
    await Promise.all(
      calls.map(async (rows) => {
        const lengths = Int32Array.from(rows, (row) => ids[row]!.length);
        const flat = Int32Array.from(rows.flatMap((row) => ids[row]!));
        const data = await pool.run({ ids: flat, lengths });
        const width = data.length / rows.length;
        for (const [r, row] of rows.entries()) vectors[row] = data.slice(r * width, (r + 1) * width);
        done += rows.length;
        onProgress?.(done);
      }),
    );
    return vectors;
  };

  try {
    const [probe] = await embedIds([idsOf("dimensions")]);
    return {
      id: maxTokens === MAX_TOKENS ? USE_LITE_ID : `${MODEL_ID}#ids=${maxTokens}`,
      dimensions: probe!.length,
      embed: (texts, onProgress) => embedIds(texts.map(idsOf), onProgress),
      knows: async (text) => useLiteKnows(text),
      close: async () => pool.close(),
    };
  } catch (error) {
    pool.close();
    throw error;
  }
}
