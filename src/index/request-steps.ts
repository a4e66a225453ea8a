import { STOP_WORDS, tokenize } from "./tokenizer.ts";

/**
 * Requests of several steps ("create an index, then check its health. Finally …") need a tool per
 * step, but one search over the whole request ranks the tools of its most wordy step first and
 * leaves the others' out of the top: on the retrieval eval's cross-server tasks only 29% had every
 * needed tool in the top 10. Each step is therefore searched on its own too, and the answer
 * interleaves the steps' rankings after the whole request's best tools.
 *
 * On the eval (bench/retrieval-experiment.ts) this raised all@10 on the cross-server tasks by
 * +0.165 [+0.078, +0.262] and their recall@5 by +0.024 [−0.012, +0.063], left recall@1 unchanged
 * (the first tool is still the whole request's) and cost no subset beyond its interval. Splitting
 * on commas and "and" as well cut requests into fragments too small to name a tool (recall@5
 * −0.107 there).
 */
const STEP_BOUNDARY = /(?<=[.!?;])\s+(?=\S)|\b(?:then|after that|afterwards|finally|next|also)\b/i;

/** How many of the whole request's best tools come before the steps' own. */
export const WHOLE_REQUEST_HEAD = 2;

/** A step must say at least this much to be searched on its own. */
const STEP_MIN_WORDS = 2;

/** Whether a request reads as several steps (sentences, "then", "finally", …). */
export function namesSeveralSteps(request: string): boolean {
  return STEP_BOUNDARY.test(request.trim());
}

/** The steps of a request worth a search of their own; empty when it is one step. */
export function requestSteps(request: string): string[] {
  const steps = request
    .split(STEP_BOUNDARY)
    .map((step) => step.trim())
    .filter((step) => tokenize(step).filter((word) => !STOP_WORDS.has(word)).length >= STEP_MIN_WORDS);
  return steps.length >= 2 ? steps : [];
}

/**
 * The whole request's best `WHOLE_REQUEST_HEAD` hits, then each step's hits in turn, rank by
 * rank, with the whole request's next hit after each round; no tool twice, at most `limit`.
 * Scores keep their meaning (the share of the request or step a tool matches) but are capped by
 * the one above, so the list stays best first for anything that sorts it again.
 */
export function interleaveSteps<T extends { id: string; score: number }>(
  whole: readonly T[],
  steps: readonly (readonly T[])[],
  limit: number,
): T[] {
  const merged: T[] = [];
  const seen = new Set<string>();
  const take = (hit: T | undefined) => {
    if (!hit || merged.length >= limit || seen.has(hit.id)) return;
    seen.add(hit.id);
    const above = merged.at(-1)?.score ?? Number.POSITIVE_INFINITY;
    merged.push(hit.score > above ? { ...hit, score: above } : hit);
  };
  for (const hit of whole.slice(0, WHOLE_REQUEST_HEAD)) take(hit);
  const depth = Math.max(whole.length, ...steps.map((step) => step.length));
  for (let rank = 0; rank < depth && merged.length < limit; rank++) {
    for (const step of steps) take(step[rank]);
    take(whole[WHOLE_REQUEST_HEAD + rank]);
  }
  return merged;
}
