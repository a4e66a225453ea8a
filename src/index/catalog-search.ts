import type { UpstreamTool } from "../upstream-tool.ts";
import type { CatalogTool, RankedTool, SearchFound } from "./catalog-types.ts";
import { askedOperation, OPERATION_CANDIDATES, rescoreByOperation } from "./operation-agreement.ts";
import { searchedText } from "./query-text.ts";
import { relevanceFloor } from "./relevance-floor.ts";
import { mergeSteps, type Ranking, requestSteps, STEP_CANDIDATES } from "./request-steps.ts";
import type { SearchHit, SearchIndex } from "./search-index.ts";
import { HYBRID_CANDIDATES, RELEVANT_COSINE, type ToolVectors } from "./tool-vectors.ts";

/**
 * How the catalog answers a search: each request (and each of its steps) ranked lexically,
 * re-scored by the operation it names, fused with the vectors when every tool has one, merged
 * across steps, and the quarantined tools set aside. The catalog (tool-catalog.ts) owns the state;
 * this is the reading side of it.
 */
export interface CatalogSearchState {
  /** The current lexical index (the catalog swaps it when it rebuilds), once loaded (catalog-index.ts). */
  index: () => Promise<SearchIndex>;
  tools: ReadonlyMap<string, CatalogTool>;
  vectors: ToolVectors | undefined;
  approvals: { isQuarantined(tool: CatalogTool): boolean } | undefined;
  /** Disabled by a person: never a hit (the vectors may still hold it). */
  isHidden: (tool: CatalogTool) => boolean;
  definitionOf: (tool: CatalogTool) => UpstreamTool | undefined;
  /** Settles the public names after changes (called once per search, after its awaits). */
  ensureNames: () => void;
}

/** How many hits more than asked a search takes, to fill the places of quarantined tools. */
const QUARANTINE_SLACK = 10;

export function createCatalogSearch(state: CatalogSearchState) {
  const { tools, vectors, approvals } = state;

  /**
   * One text's ranking: lexical, re-scored by the operation it names, and fused with the vectors
   * when the text's vector is given. A fused ranking is kept whole when one of its hits' lexical
   * score reaches the floor or its cosine RELEVANT_COSINE, else it is empty; it needs no floor of
   * its own then.
   */
  const rankText = async (
    text: string,
    wanted: number,
    floor: number,
    query?: Float32Array,
  ): Promise<Ranking<SearchHit>> => {
    // Wider only when there is re-scoring or fusing to do: most requests name no single operation.
    const asked = askedOperation(text);
    const candidates = query ? HYBRID_CANDIDATES : asked ? OPERATION_CANDIDATES : wanted;
    let hits = await (await state.index()).search(text, Math.max(wanted, candidates));
    if (asked) hits = rescoreByOperation(asked, hits, (id) => tools.get(id)?.tool);
    if (!query || !vectors) return { hits: hits.slice(0, wanted), floor };
    const fused = vectors.fuse(query, hits, Number.POSITIVE_INFINITY);
    const isRelevant = fused.some((hit) => hit.lexical >= floor || hit.cosine >= RELEVANT_COSINE);
    return {
      hits: isRelevant ? fused.slice(0, wanted).map(({ id, score }) => ({ id, score })) : [],
      floor: 0,
    };
  };

  /** One request's hits, best first, its steps' rankings merged in (request-steps.ts). */
  const rankRequest = async (
    text: string,
    steps: readonly string[],
    queries: readonly (Float32Array | undefined)[],
    wanted: number,
    minScore: number,
  ): Promise<SearchHit[]> => {
    // The floor is scaled by each text's length and judged per ranking (relevance-floor.ts, mergeSteps).
    const ranking = (searched: string, i: number) =>
      rankText(
        searched,
        steps.length > 0 ? Math.max(wanted, STEP_CANDIDATES) : wanted,
        relevanceFloor(searched, minScore),
        queries[i],
      );
    const whole = await ranking(text, 0);
    return steps.length > 0
      ? mergeSteps(whole, await Promise.all(steps.map((step, i) => ranking(step, i + 1))), wanted)
      : whole.hits.filter((hit) => hit.score >= whole.floor);
  };

  /** The approved tools among the hits, at most `limit`, and the quarantined ones that matched. */
  const approvedOf = (hits: readonly SearchHit[], limit: number): SearchFound => {
    const ranked: RankedTool[] = [];
    const held: CatalogTool[] = [];
    for (const hit of hits) {
      if (ranked.length >= limit) break;
      const tool = tools.get(hit.id);
      if (!tool || state.isHidden(tool)) continue;
      if (approvals?.isQuarantined(tool)) {
        if (ranked.length + held.length < limit) held.push(tool);
        continue;
      }
      const definition = state.definitionOf(tool);
      if (definition) ranked.push({ tool, definition, score: hit.score });
    }
    return { hits: ranked, held };
  };

  /**
   * Several requests in one pass, answered in their order: every request and step is embedded in
   * one call of the embedder (a model's batch costs far less than a call per text), a request
   * asked twice is searched once, and names are settled once.
   */
  const searchAllWithHeld = async (
    asked: readonly string[],
    limit: number,
    minScore = 0,
  ): Promise<SearchFound[]> => {
    const distinct = [...new Set(asked)];
    // A few more than asked, so quarantined tools left out do not leave the answer short.
    const wanted = approvals ? limit + QUARANTINE_SLACK : limit;
    const requests = distinct.map((query) => {
      const text = searchedText(query);
      return { query, text, steps: limit > 1 ? requestSteps(text) : [] };
    });
    // Fused only once every tool has its vector.
    const texts = requests.flatMap(({ text, steps }) => [text, ...steps]);
    const embedded = vectors?.isReady() ? await vectors.embedQueries(texts) : [];
    const found = new Map<string, SearchHit[]>();
    let at = 0;
    for (const [i, { query, text, steps }] of requests.entries()) {
      // Between requests the process answers others: a batch of ten 4,096-character tasks is
      // about 35 ms of search at 2,375 tools, and it must not hold every other session that long.
      if (i > 0) await new Promise((resolve) => setImmediate(resolve));
      const queries = embedded.slice(at, at + 1 + steps.length);
      at += 1 + steps.length;
      found.set(query, await rankRequest(text, steps, queries, wanted, minScore));
    }
    state.ensureNames(); // here, after the awaits: a sync may have added tools meanwhile
    return asked.map((query) => approvedOf(found.get(query)!, limit));
  };

  return { searchAllWithHeld };
}
