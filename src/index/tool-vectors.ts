import type { Logger } from "../log.ts";
import type { CatalogStore } from "./catalog-store.ts";
import type { Embedder } from "./embedders/embedder.ts";
import { fuseRankings } from "./hybrid-ranking.ts";
import type { SearchHit } from "./search-index.ts";
import { toolFields, toolText, type UpstreamTool } from "./tool-document.ts";
import { toolKey } from "./tool-naming.ts";
import { createVectorIndex, type VectorIndex } from "./vector-index.ts";

/**
 * The vector half of a hybrid catalog: one vector per tool, stored in the catalog with the hash of
 * the tool it was computed from, so only new and changed tools are embedded, and a change of
 * embedder (recorded with its dimensions) drops them all.
 */
export interface ToolVectors {
  index: VectorIndex;
  /** Embeds tools and stores their vectors. */
  add(tools: readonly EmbeddableTool[]): Promise<void>;
  /** Fuses the lexical hits with the vector ranking for the same query text. */
  fuse(text: string, lexical: readonly SearchHit[], limit: number): Promise<SearchHit[]>;
}

export interface EmbeddableTool {
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
}

/** How many lexical and vector candidates the fusion considers, at least. */
export const HYBRID_CANDIDATES = 50;
export const DEFAULT_VECTOR_WEIGHT = 0.2;

/** Loads the stored vectors that are still current and embeds every tool that has none. */
export async function openToolVectors(
  embedder: Embedder,
  store: CatalogStore,
  tools: ReadonlyMap<string, { server: string; tool: string; hash: string; key: string }>,
  options: ToolVectorsOptions,
): Promise<ToolVectors> {
  store.useEmbedder(`${embedder.id}#${embedder.dimensions}`);
  const index = createVectorIndex(embedder.dimensions);
  for (const stored of store.listVectors()) {
    const key = toolKey(stored);
    if (tools.get(key)?.hash === stored.hash && stored.vector.length === embedder.dimensions)
      index.set(key, stored.vector);
  }
  const vectorWeight = options.vectorWeight ?? DEFAULT_VECTOR_WEIGHT;
  const vectors: ToolVectors = {
    index,
    async add(fresh) {
      if (fresh.length === 0) return;
      const embedded = await embedder.embed(
        fresh.map((tool) => toolText(toolFields(tool.server, tool.definition))),
        (done) => options.onEmbedProgress?.(done, fresh.length),
      );
      store.putVectors(
        fresh.map((tool, i) => ({
          server: tool.server,
          tool: tool.tool,
          hash: tool.hash,
          vector: embedded[i]!,
        })),
      );
      for (const [i, tool] of fresh.entries()) index.set(tool.key, embedded[i]!);
    },
    async fuse(text, lexical, limit) {
      const [query] = await embedder.embed([text]);
      const vectorHits = index.search(query!, Math.max(limit, HYBRID_CANDIDATES));
      return fuseRankings(lexical, (id) => index.similarity(id, query!), vectorHits, vectorWeight, limit);
    },
  };
  const missing = [...tools.values()].flatMap((tool) => {
    const definition = index.has(tool.key) ? undefined : store.definitionOf(tool.server, tool.tool);
    return definition ? [{ ...tool, definition }] : [];
  });
  if (missing.length > 0) {
    options.logger.info(`embedding ${missing.length} tools with ${embedder.id}`);
    await vectors.add(missing);
  }
  return vectors;
}
