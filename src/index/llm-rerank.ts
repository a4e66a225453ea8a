import { createHash } from "node:crypto";
import type { ResolvedLlmSearch } from "../config/search-config.ts";
import type { Logger } from "../log.ts";
import type { RerankRecord } from "../stats/rerank-stats.ts";
import { ChatFailure, requestChatCompletion } from "./chat-completions.ts";
import { buildRerankPrompt, candidateData, parseRerankAnswer } from "./rerank-prompt.ts";
import type { RetrievedTool } from "./retrieve-tools.ts";

/**
 * `llm` search mode: the search's best `candidates` hits go to a chat model, which puts them in
 * its order and leaves out the weak ones. It can only reorder and drop: the tools shown are the
 * candidates' own entries, with the candidates' scores handed out best-first in the new order (so
 * scores still fall down the list and keep their range). Anything that goes wrong (a timeout, an
 * HTTP error, a refused connection, an unusable answer) keeps the search's own order and logs one
 * line: a search never fails for it. Answers are cached per request and candidate set.
 */
export interface Reranker {
  /** How many of the search's best hits it reads. */
  readonly candidates: number;
  /** The hits in the model's order, weak ones dropped; as given when that fails. */
  rerank(query: string, hits: readonly RetrievedTool[]): Promise<RetrievedTool[]>;
}

interface LlmRerankOptions extends ResolvedLlmSearch {
  /** The key's value, read from `apiKeyEnv` by the caller; sent only as the Authorization header. */
  apiKey?: string | undefined;
  logger: Logger;
  /** Where each search's use of the model is counted (stats.db); unset, nowhere. */
  record?: ((record: RerankRecord) => void) | undefined;
  now?: () => number;
}

/** Cached answers kept at most: each is a key and up to 50 names, so this is well under 1 MB. */
const CACHE_ENTRIES = 500;
/** The largest answer body read: 20 names take about 2 KB; a reasoning model's may take more. */
const ANSWER_BYTES = 256 * 1024;

/** The reranker `config.search` asks for, or undefined when the mode is not `llm`. */
export function rerankerFor(
  search: { mode: string; llm?: ResolvedLlmSearch | undefined },
  logger: Logger,
  record?: (record: RerankRecord) => void,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Reranker | undefined {
  if (search.mode !== "llm" || !search.llm) return undefined;
  const { apiKeyEnv } = search.llm;
  return createLlmReranker({
    ...search.llm,
    apiKey: apiKeyEnv ? env[apiKeyEnv] : undefined,
    logger: logger.child("search"),
    record,
  });
}

function createLlmReranker(options: LlmRerankOptions): Reranker {
  const now = options.now ?? Date.now;
  const cache = new Map<string, { names: string[]; expires: number }>();
  const inFlight = new Map<string, Promise<string[] | undefined>>();
  const record = (entry: Omit<RerankRecord, "model">) => options.record?.({ model: options.model, ...entry });
  const redact = (text: string) => (options.apiKey ? text.split(options.apiKey).join("[redacted]") : text);

  const cached = (key: string): string[] | undefined => {
    const entry = cache.get(key);
    if (!entry) return undefined;
    cache.delete(key);
    if (entry.expires <= now()) return undefined;
    cache.set(key, entry); // most recently used last: the first is the one to evict
    return entry.names;
  };
  const remember = (key: string, names: string[]) => {
    if (options.cacheTtlMs === 0) return;
    cache.set(key, { names, expires: now() + options.cacheTtlMs });
    while (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  };

  /** The model's order of the candidates' names, or undefined (logged and counted) when unusable. */
  const ask = async (query: string, candidates: readonly RetrievedTool[]): Promise<string[] | undefined> => {
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
    const fallBack = (reason: string, tokens: Partial<RerankRecord> = {}) => {
      const ms = elapsed();
      options.logger.warn(
        redact(`LLM re-rank by ${options.model} failed (${reason}); the search's own order is kept`),
      );
      record({ outcome: "fallback", ms, reason: redact(reason), ...tokens });
      return undefined;
    };
    let answer: Awaited<ReturnType<typeof requestChatCompletion>>;
    try {
      answer = await requestChatCompletion({
        baseUrl: options.baseUrl,
        model: options.model,
        apiKey: options.apiKey,
        messages: buildRerankPrompt(query, candidates),
        timeoutMs: options.timeoutMs,
        maxBytes: ANSWER_BYTES,
      });
    } catch (error) {
      return fallBack(error instanceof ChatFailure ? error.message : "the request failed");
    }
    const tokens = {
      promptTokens: answer.usage?.promptTokens,
      completionTokens: answer.usage?.completionTokens,
    };
    const parsed = parseRerankAnswer(
      answer.content,
      candidates.map((hit) => hit.name),
    );
    if (!parsed.usable) return fallBack(parsed.reason, tokens);
    const ms = elapsed();
    record({ outcome: "ranked", ms, ...tokens });
    if (options.logger.enabled("debug")) {
      options.logger.debug(
        `LLM re-rank by ${options.model}: ${parsed.names.length} of ${candidates.length} candidates kept in ${ms} ms` +
          (parsed.ignored > 0 ? `; ${parsed.ignored} other name(s) in the answer ignored` : ""),
      );
    }
    return parsed.names;
  };

  return {
    candidates: options.candidates,
    async rerank(query, hits) {
      const candidates = hits.slice(0, options.candidates);
      // One candidate cannot be reordered, and an answer that drops it is read as unusable.
      if (candidates.length < 2) return [...hits];
      const key = cacheKey(query, candidates);
      const known = cached(key);
      if (known) {
        record({ outcome: "cached" });
        return inModelOrder(known, candidates);
      }
      let pending = inFlight.get(key);
      if (pending) record({ outcome: "cached" });
      else {
        pending = ask(query, candidates).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      const names = await pending;
      if (!names) return [...hits];
      remember(key, names);
      return inModelOrder(names, candidates);
    },
  };
}

/**
 * The candidates named, in that order, with the candidates' scores best-first: the first kept
 * tool gets the best score among them, the second the next, and so on.
 */
function inModelOrder(names: readonly string[], candidates: readonly RetrievedTool[]): RetrievedTool[] {
  const byName = new Map(candidates.map((hit) => [hit.name, hit]));
  const scores = candidates.map((hit) => hit.score).sort((a, b) => b - a);
  return names.flatMap((name, i) => {
    const hit = byName.get(name);
    return hit ? [{ ...hit, score: scores[i] ?? hit.score }] : [];
  });
}

/** The request and the candidates as the model reads them, in any order: a changed description is a new key. */
function cacheKey(query: string, candidates: readonly RetrievedTool[]): string {
  const lines = candidates.map((hit) => JSON.stringify(candidateData(hit))).sort();
  return createHash("sha256")
    .update(JSON.stringify([query, lines]))
    .digest("hex");
}
