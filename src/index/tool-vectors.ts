import { describeError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { CatalogStore } from "../store/sqlite/catalog-store.ts";
import type { UpstreamTool } from "../upstream-tool.ts";
import type { Embedder } from "./embedders/embedder.ts";
import { type FusedHit, fuseRankings } from "./hybrid-ranking.ts";
import { contentWordCount, FLOOR_WORDS } from "./relevance-floor.ts";
import type { SearchHit } from "./search-index.ts";
import { toolFields, toolText } from "./tool-document.ts";
import { toolKey } from "./tool-naming.ts";
import { createVectorIndex, type VectorIndex } from "./vector-index.ts";

/**
 * The vector half of a hybrid catalog: one vector per tool, stored in the catalog with the hash of
 * the tool it was computed from, so only new and changed tools are embedded, and a change of
 * embedder (recorded with its dimensions) drops them all.
 *
 * Tools are embedded in the background, after the lexical index has them: the built-in encoder
 * takes about 20 s per 1,000 tools on two cores, and search must answer meanwhile. Until every
 * indexed tool has its vector (`isReady`), search is lexical only; a ranking in which some tools
 * had no vector would favour the ones that do. On demand (`auto` search), nothing is embedded
 * until a request needs the vectors (`prepare`); from then on new and changed tools are embedded
 * as they come, as in `hybrid`.
 */
export interface ToolVectors {
  index: VectorIndex;
  /** Queues new and changed tools for embedding; their old vectors no longer count. */
  schedule(tools: readonly EmbeddableTool[]): void;
  /** Forgets a removed tool. */
  remove(key: string): void;
  /** Every tool queued so far has its vector. */
  isReady(): boolean;
  /**
   * Resolves when the queue is empty, or on demand when nothing asked for the vectors yet; rejects
   * with the embedder's error when a batch failed.
   */
  whenReady(): Promise<void>;
  /**
   * Starts embedding what waits (on demand, the first request that needs the vectors does), and
   * waits for it when at most `waitFor` tools wait; true once every tool has its vector. A failed
   * embedding is not tried again until the tools change.
   */
  prepare(waitFor: number): Promise<boolean>;
  /**
   * One vector per request text of at most FLOOR_WORDS content words that the embedder has words
   * for (`canEmbed`), in one call of the embedder; undefined for any other, which is searched
   * lexically.
   */
  embedQueries(texts: readonly string[]): Promise<(Float32Array | undefined)[]>;
  /** Whether a request text gets a vector: short enough (DENSE_TEXT_WORDS) and words the embedder knows. */
  canEmbed(text: string): Promise<boolean>;
  /** Fuses the lexical hits with the vector ranking for the same query (fuseRankings). */
  fuse(query: Float32Array, lexical: readonly SearchHit[], limit: number): FusedHit[];
  /** Stops after the batch in flight and waits for it. */
  stop(): Promise<void>;
}

interface EmbeddableTool {
  key: string;
  server: string;
  tool: string;
  hash: string;
  definition: UpstreamTool;
}

export interface ToolVectorsOptions {
  logger: Logger;
  /** The vector share of the fused score, 0–1. */
  vectorWeight?: number;
  onEmbedProgress?: (done: number, total: number) => void;
  /** Embed nothing until `prepare` is called (`auto` search: the vectors are a fallback). */
  isOnDemand?: boolean | undefined;
}

/** How many lexical and vector candidates the fusion takes, each. */
export const HYBRID_CANDIDATES = 50;
/** The cosine share of the fused score: chosen on the retrieval eval (docs/research/retrieval-lab-notes.md). */
const DEFAULT_VECTOR_WEIGHT = 0.4;
/**
 * A fused ranking is relevant to its text when one of its candidates' lexical score reaches the
 * relevance floor or its cosine reaches this; then the whole ranking is kept, else none of it. A
 * request unlike every tool still gets the empty answer, and a paraphrase whose right tool sits
 * at a cosine of 0.25 (a quarter of the quick start's everyday requests do) is not cut off: per
 * candidate, this cut cost those requests recall@5 −0.04 (docs/research/retrieval-lab-notes.md).
 */
export const RELEVANT_COSINE = 0.3;
/**
 * Texts longer than this many distinct content words are not fused: a sentence encoder averages a
 * 70-word task into a vector near many tools, and fusing it cost the eval's long tasks recall@5
 * −0.062 (docs/research/retrieval-lab-notes.md). Each step of such a task is short enough and is fused on its own.
 */
const DENSE_TEXT_WORDS = FLOOR_WORDS;

/** Whether a request text is short enough to be fused (DENSE_TEXT_WORDS); a longer one is searched lexically. */
export const isDenseText = (text: string) => contentWordCount(text) <= DENSE_TEXT_WORDS;
/** Tools per call of the embedder in the background: small, so a stop never waits long. */
const EMBED_BATCH = 64;

/**
 * Loads the stored vectors that are still current and queues every tool that has none; on demand,
 * not before a request needs the vectors (until then nothing is read, held or queued).
 */
export function openToolVectors(
  embedder: Embedder,
  store: CatalogStore,
  tools: ReadonlyMap<string, { server: string; tool: string; hash: string; key: string }>,
  options: ToolVectorsOptions,
  /** What is embedded of a tool: the definition an agent sees, and its hash (tool-override-view.ts). */
  shown: {
    hashOf(tool: { server: string; tool: string; hash: string; key: string }): string;
    definitionOf(tool: { server: string; tool: string; hash: string; key: string }): UpstreamTool | undefined;
  },
): ToolVectors {
  const index = createVectorIndex(embedder.dimensions);
  const vectorWeight = options.vectorWeight ?? DEFAULT_VECTOR_WEIGHT;
  /** Tools waiting for a vector, by key; a newer definition replaces the one queued. */
  const pending = new Map<string, EmbeddableTool>();
  let draining: Promise<void> | undefined;
  let failure: unknown;
  let isStopped = false;
  let isStarted = false;
  let done = 0;

  const embedBatch = async (batch: EmbeddableTool[]) => {
    const embedded = await embedder.embed(
      batch.map((tool) => toolText(toolFields(tool.server, tool.definition))),
    );
    // A tool changed or removed while its batch ran keeps its newer entry (or none).
    const current = batch.flatMap((tool, i) =>
      pending.get(tool.key) === tool ? [{ tool, vector: embedded[i]! }] : [],
    );
    store.putVectors(
      current.map(({ tool, vector }) => ({ server: tool.server, tool: tool.tool, hash: tool.hash, vector })),
    );
    for (const { tool, vector } of current) {
      index.set(tool.key, vector);
      pending.delete(tool.key);
    }
  };
  const drain = async () => {
    try {
      while (pending.size > 0 && !isStopped) {
        const batch = [...pending.values()].slice(0, EMBED_BATCH);
        await embedBatch(batch);
        done += batch.length;
        options.onEmbedProgress?.(done, done + pending.size);
      }
      if (!isStopped) options.logger.debug(`embedded ${done} tools with ${embedder.id}`);
    } catch (error) {
      failure = error;
      options.logger.warn(
        `embedding tools with ${embedder.id} failed (${describeError(error)}); search stays lexical until the next change`,
      );
    } finally {
      draining = undefined;
    }
  };

  const startDrain = () => {
    if (draining || pending.size === 0 || isStopped) return;
    done = 0;
    options.logger.info(`embedding ${pending.size} tools with ${embedder.id} in the background`);
    draining = drain();
  };

  const vectors: ToolVectors = {
    index,
    schedule(fresh) {
      // Before the vectors are loaded there is nothing to replace: loading queues every tool without one.
      if (fresh.length === 0 || isStopped || !isStarted) return;
      for (const tool of fresh) {
        index.delete(tool.key);
        pending.set(tool.key, tool);
      }
      failure = undefined;
      if (isStarted) startDrain();
    },
    remove(key) {
      pending.delete(key);
      index.delete(key);
    },
    isReady: () => isStarted && pending.size === 0,
    async whenReady() {
      while (draining) await draining;
      if (pending.size > 0 && failure !== undefined) throw failure;
    },
    async prepare(waitFor) {
      start();
      if (failure === undefined) startDrain();
      if (pending.size > waitFor) return false;
      while (draining) await draining;
      return pending.size === 0;
    },
    async canEmbed(text) {
      return isDenseText(text) && ((await embedder.knows?.(text)) ?? true);
    },
    async embedQueries(texts) {
      const able = await Promise.all(texts.map((text) => vectors.canEmbed(text)));
      const short = texts.filter((_, i) => able[i]);
      const embedded = short.length > 0 ? await embedder.embed(short) : [];
      const byText = new Map(short.map((text, i) => [text, embedded[i]!]));
      return texts.map((text) => byText.get(text));
    },
    fuse(query, lexical, limit) {
      const vectorHits = index.search(query, HYBRID_CANDIDATES);
      return fuseRankings(lexical, (id) => index.similarity(id, query), vectorHits, vectorWeight, limit);
    },
    async stop() {
      isStopped = true;
      await draining;
    },
  };
  /** The stored vectors still current, and every tool without one queued. */
  function start() {
    if (isStarted) return;
    isStarted = true;
    store.useEmbedder(`${embedder.id}#${embedder.dimensions}`);
    for (const stored of store.listVectors()) {
      const key = toolKey(stored);
      const tool = tools.get(key);
      if (tool && shown.hashOf(tool) === stored.hash && stored.vector.length === embedder.dimensions)
        index.set(key, stored.vector);
    }
    vectors.schedule(
      [...tools.values()].flatMap((tool) => {
        const definition = index.has(tool.key) ? undefined : shown.definitionOf(tool);
        return definition ? [{ ...tool, definition, hash: shown.hashOf(tool) }] : [];
      }),
    );
  }
  if (!options.isOnDemand) start();
  return vectors;
}
