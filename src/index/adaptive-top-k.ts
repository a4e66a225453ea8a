import { requestSteps } from "./request-steps.ts";
import { STOP_WORDS, tokenize } from "./tokenizer.ts";

/**
 * Adaptive top-k: a ranked list is cut where its scores fall off from the best hit, so a precise
 * request gets the one or two tools it needs instead of `top_k` schemas.
 *
 * What the scores are decides the rule. A lexical score is the share of the request a tool
 * matches (bm25-scoring.ts), a fused one is min-max scaled over the request's candidates
 * (hybrid-ranking.ts), and the learned prior and plugin rankers shift either a little: none of
 * them is comparable across requests, so a fixed threshold means nothing, but each hit's score
 * over the best one's does. A hit is kept while it scores at least FALL_OFF of the best.
 * Consecutive-gap rules ("cut at the first drop of more than G") were measured too and kept fewer
 * right tools for the same number of schemas (bench/experiments/adaptive-top-k-experiment.ts).
 *
 * A request that asks for several things needs a tool for each, and those tools score far below
 * the best (the best matches the most wordy part): on the eval's multi-step levels the needed
 * tools below the first place scored a median of 0.81 (L4) to 0.89 (L3) of the best, and a tenth
 * of them under 0.44 to 0.57.
 * So a request of several steps (request-steps.ts) is never cut, and any other keeps at least
 * one tool per clause it names (clauseCount).
 *
 * FALL_OFF was chosen on one half of the eval's server split and checked on the other; it is
 * opt-in, because recall@5 did not hold on the second half (docs/research/retrieval-lab-notes.md).
 */
export const FALL_OFF = 0.75;

/**
 * Where a request may name another thing to do: sentence ends, commas and semicolons, "and",
 * "plus", "as well as" and the step words of request-steps.ts. Wider than the step split on
 * purpose: searching fragments this small cost recall (request-steps.ts), but counting them
 * only decides how many tools the cut must leave.
 */
const CLAUSE_BOUNDARY =
  /(?<=[.!?;,])\s+(?=\S)|\b(?:and|then|after that|afterwards|finally|next|also|plus|as well as)\b/i;
/** A clause must say at least this much to count (as a step must in request-steps.ts). */
const CLAUSE_MIN_WORDS = 2;

/** How many clauses of at least CLAUSE_MIN_WORDS content words the request has; at least 1. */
export function clauseCount(request: string): number {
  const clauses = request
    .split(CLAUSE_BOUNDARY)
    .filter(
      (clause) =>
        clause && tokenize(clause).filter((word) => !STOP_WORDS.has(word)).length >= CLAUSE_MIN_WORDS,
    );
  return Math.max(1, clauses.length);
}

/**
 * How many of `scores` (best first) come before the first one below `fallOff` of the best; all
 * of them when the best is not above 0 (nothing to be relative to).
 */
export function fallOffCount(scores: readonly number[], fallOff = FALL_OFF): number {
  const best = scores[0] ?? 0;
  if (best <= 0) return scores.length;
  let kept = 1;
  while (kept < scores.length && scores[kept]! >= fallOff * best) kept++;
  return kept;
}

/**
 * How many hits of a ranked list (scores best first) an adaptive answer keeps for `request`, the
 * text that was searched: the hits before the fall-off, but at least one per clause, and the whole
 * list for a request of several steps.
 */
export function adaptiveCount(scores: readonly number[], request: string, fallOff = FALL_OFF): number {
  if (requestSteps(request).length > 0) return scores.length;
  return Math.min(scores.length, Math.max(fallOffCount(scores, fallOff), clauseCount(request)));
}
