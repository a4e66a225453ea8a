import { describeError } from "../errors.ts";
import type { Logger } from "../log.ts";
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
 * re-scored by the operation it names, fused with the vectors when every tool has one (`hybrid`:
 * every text; `auto`: only a text whose lexical ranking is weak), merged across steps, and the
 * quarantined tools set aside. The catalog (tool-catalog.ts) owns the state; this is the reading
 * side of it.
 */
export interface CatalogSearchState {
  /** The current lexical index (the catalog swaps it when it rebuilds), once loaded (catalog-index.ts). */
  index: () => Promise<SearchIndex>;
  tools: ReadonlyMap<string, CatalogTool>;
  vectors: ToolVectors | undefined;
  /**
   * `always` (hybrid): every short text is fused. `fallback` (auto): a text is fused only when its
   * lexical ranking is weak (WEAK_SCORE), and the tools are embedded when that first happens.
   */
  vectorUse: "always" | "fallback";
  /**
   * In `fallback`, how many tools may still wait for a vector when a request first needs them for
   * the request to wait; with more, it is answered lexically while they are embedded.
   */
  fallbackWait: number;
  logger: Logger;
  approvals: { isQuarantined(tool: CatalogTool): boolean } | undefined;
  /** Disabled by a person: never a hit (the vectors may still hold it). */
  isHidden: (tool: CatalogTool) => boolean;
  definitionOf: (tool: CatalogTool) => UpstreamTool | undefined;
  /** Settles the public names after changes (called once per search, after its awaits). */
  ensureNames: () => void;
}

/** How many hits more than asked a search takes, to fill the places of quarantined tools. */
const QUARANTINE_SLACK = 10;
/**
 * In `auto` search a text's lexical ranking is weak when its best score is under this share,
 * scaled by the text's length as the floor is (relevance-floor.ts): twice the default minimum
 * score. Fusing only those changed none of the eval's rankings and lifted a held-aside set of
 * everyday requests by recall@5 +0.08 (docs/research/retrieval-lab-notes.md).
 */
export const WEAK_SCORE = 0.1;
/** In `auto` search, how many tools a request waits to see embedded (about 2–5 s); see `fallbackWait`. */
export const FALLBACK_WAIT_TOOLS = 256;

/** A text's vector: known before it is ranked (`always`), or asked for when its ranking is weak (`fallback`). */
interface TextVectors {
  before(text: string): Float32Array | undefined;
  whenWeak?: ((text: string) => Promise<Float32Array | undefined>) | undefined;
}

export function createCatalogSearch(state: CatalogSearchState) {
  const { tools, vectors, approvals } = state;

  /**
   * One text's ranking: lexical, re-scored by the operation it names, and fused with the text's
   * vector when it has one (or, in `fallback`, gets one because the lexical ranking is weak). A
   * fused ranking is kept whole when one of its hits' lexical score reaches the floor or its
   * cosine RELEVANT_COSINE, else it is empty; it needs no floor of its own then.
   */
  const rankText = async (
    text: string,
    wanted: number,
    floor: number,
    textVectors: TextVectors,
  ): Promise<Ranking<SearchHit>> => {
    const asked = askedOperation(text);
    const search = async (candidates: number) => {
      const hits = await (await state.index()).search(text, Math.max(wanted, candidates));
      return asked ? rescoreByOperation(asked, hits, (id) => tools.get(id)?.tool) : hits;
    };
    const fused = (hits: readonly SearchHit[], query: Float32Array): Ranking<SearchHit> => {
      const ranked = vectors!.fuse(query, hits, Number.POSITIVE_INFINITY);
      const isRelevant = ranked.some((hit) => hit.lexical >= floor || hit.cosine >= RELEVANT_COSINE);
      return {
        hits: isRelevant ? ranked.slice(0, wanted).map(({ id, score }) => ({ id, score })) : [],
        floor: 0,
      };
    };
    const query = textVectors.before(text);
    if (query) return fused(await search(HYBRID_CANDIDATES), query);
    // Wider only when there is re-scoring to do: most requests name no single operation.
    const hits = await search(asked ? OPERATION_CANDIDATES : wanted);
    const lexical = { hits: hits.slice(0, wanted), floor };
    const isWeak = textVectors.whenWeak && (hits[0]?.score ?? 0) < relevanceFloor(text, WEAK_SCORE);
    const late = isWeak ? await textVectors.whenWeak!(text) : undefined;
    return late ? fused(await search(HYBRID_CANDIDATES), late) : lexical;
  };

  /** One request's hits, best first, its steps' rankings merged in (request-steps.ts). */
  const rankRequest = async (
    text: string,
    steps: readonly string[],
    textVectors: TextVectors,
    wanted: number,
    minScore: number,
  ): Promise<SearchHit[]> => {
    // The floor is scaled by each text's length and judged per ranking (relevance-floor.ts, mergeSteps).
    const ranking = (searched: string) =>
      rankText(
        searched,
        steps.length > 0 ? Math.max(wanted, STEP_CANDIDATES) : wanted,
        relevanceFloor(searched, minScore),
        textVectors,
      );
    // Together, so that the weak ones among them are embedded in one call (`fallback`).
    const [whole, ...rankings] = await Promise.all([text, ...steps].map(ranking));
    return steps.length > 0
      ? mergeSteps(whole!, rankings, wanted)
      : whole!.hits.filter((hit) => hit.score >= whole!.floor);
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
    const textVectors = await textVectorsOf(requests.flatMap(({ text, steps }) => [text, ...steps]));
    const found = new Map<string, SearchHit[]>();
    for (const [i, { query, text, steps }] of requests.entries()) {
      // Between requests the process answers others: a batch of ten 4,096-character tasks is
      // about 35 ms of search at 2,375 tools, and it must not hold every other session that long.
      if (i > 0) await new Promise((resolve) => setImmediate(resolve));
      found.set(query, await rankRequest(text, steps, textVectors, wanted, minScore));
    }
    state.ensureNames(); // here, after the awaits: a sync may have added tools meanwhile
    return asked.map((query) => approvedOf(found.get(query)!, limit));
  };

  /**
   * The vectors of a search's texts. `always`: every text in one call, once every tool has its
   * vector. `fallback`: only the weak ones, asked for as the rankings find them and embedded
   * together; the first such request starts embedding the tools. Either way a text over
   * DENSE_TEXT_WORDS words, or one the embedder has no words for, gets none (`canEmbed`), and in
   * `fallback` a failure leaves the search lexical rather than failing it.
   */
  const textVectorsOf = async (texts: readonly string[]): Promise<TextVectors> => {
    if (!vectors) return { before: () => undefined };
    if (state.vectorUse === "always") {
      const embedded = vectors.isReady() ? await vectors.embedQueries(texts) : [];
      const byText = new Map(texts.map((text, i) => [text, embedded[i]]));
      return { before: (text) => byText.get(text) };
    }
    const whenWeak = gathered(async (weak) => {
      try {
        // Nothing is loaded for a text the encoder cannot read, nor while the catalog is empty
        // (a serve asked before its servers listed their tools), nor while no tool has a vector.
        if (tools.size === 0) return [];
        const able = await Promise.all(weak.map((text) => vectors.canEmbed(text)));
        if (!able.includes(true)) return [];
        if (!(await vectors.prepare(state.fallbackWait)) || vectors.index.size() === 0) return [];
        return await vectors.embedQueries(weak);
      } catch (error) {
        state.logger.warn(`embedding a request failed (${describeError(error)}); it is answered lexically`);
        return [];
      }
    });
    return { before: () => undefined, whenWeak };
  };

  return { searchAllWithHeld };
}

/**
 * One call of `embed` for the texts asked for in the same turn of the event loop: a request's
 * steps are ranked together, and the weak ones among them cost one call of the encoder. A text
 * `embed` leaves out gets undefined.
 */
function gathered(
  embed: (texts: string[]) => Promise<readonly (Float32Array | undefined)[]>,
): (text: string) => Promise<Float32Array | undefined> {
  let waiting: Map<string, ((vector: Float32Array | undefined) => void)[]> | undefined;
  const flush = async (batch: Map<string, ((vector: Float32Array | undefined) => void)[]>) => {
    const texts = [...batch.keys()];
    const vectors = await embed(texts).catch(() => []);
    for (const [i, text] of texts.entries()) for (const resolve of batch.get(text)!) resolve(vectors[i]);
  };
  return (text) =>
    new Promise((resolve) => {
      if (!waiting) {
        const batch = new Map<string, ((vector: Float32Array | undefined) => void)[]>();
        waiting = batch;
        setImmediate(() => {
          waiting = undefined;
          void flush(batch);
        });
      }
      const resolvers = waiting.get(text) ?? [];
      resolvers.push(resolve);
      waiting.set(text, resolvers);
    });
}
