import { STOP_WORDS, tokenize } from "./tokenizer.ts";

/**
 * Requests of several steps ("create an index, then check its health. Finally …") need a tool per
 * step, but one search over the whole request ranks the tools of its most wordy step first and
 * leaves the others' out of the top: on the retrieval eval's cross-server tasks only 29% had every
 * needed tool in the top 10. Each step is therefore searched on its own too, and the rankings are
 * merged by score (mergeSteps). Splitting on commas and "and" as well cut requests into fragments
 * too small to name a tool (recall@5 −0.107 on those tasks).
 */
const STEP_BOUNDARY = /(?<=[.!?;])\s+(?=\S)|\b(?:then|after that|afterwards|finally|next|also)\b/i;

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

/** How many of each ranking's best hits (the whole request's and each step's) are candidates. */
export const STEP_CANDIDATES = 30;
/** Each step's best tool is kept among this many first places of a merged ranking. */
export const STEP_BEST_PLACES = 10;

/** One text's hits, best first, and the score a hit must reach to count as relevant to that text. */
export interface Ranking<T> {
  hits: readonly T[];
  floor: number;
}

interface Candidate<T> {
  hit: T;
  whole: number;
  step: number;
  best: number;
  isRelevant: boolean;
  isStepBest: boolean;
}

/**
 * The candidates of the whole request's and each step's best STEP_CANDIDATES, ranked by the whole
 * request's relative score plus the best relative score any step gives them (a hit's score over
 * its ranking's best), no tool twice, at most `limit`. A tool that the whole request and a step
 * both rank high comes first, and the whole request's third to fifth tools are not pushed out by
 * a fixed head of two. Each step's best keeps a place among the first STEP_BEST_PLACES, taking the
 * place of the lowest other tool there: by score alone, the steps the whole request says little
 * about lost their tool from the top 10 in tasks of five to eight steps.
 * The floor is judged per ranking: a tool is kept when it reaches the floor of the whole request
 * or of one step, so a long task keeps its whole ranking while each tool in it is relevant to
 * something the request says.
 * Scores keep their meaning (the best share of the request or of a step a tool matches) but are
 * capped by the one above, so the list stays best first for anything that sorts it again.
 */
export function mergeSteps<T extends { id: string; score: number }>(
  whole: Ranking<T>,
  steps: readonly Ranking<T>[],
  limit: number,
  /** A seam for bench/retrieval-experiment.ts: 0 ranks by score alone. */
  stepBestPlaces = STEP_BEST_PLACES,
): T[] {
  const candidates = new Map<string, Candidate<T>>();
  const add = ({ hits, floor }: Ranking<T>, isWhole: boolean) => {
    const top = hits[0]?.score ?? 0;
    if (top <= 0) return;
    hits.slice(0, STEP_CANDIDATES).forEach((hit, rank) => {
      const relative = hit.score / top;
      const entry = candidates.get(hit.id) ?? {
        hit,
        whole: 0,
        step: 0,
        best: 0,
        isRelevant: false,
        isStepBest: false,
      };
      if (isWhole) entry.whole = relative;
      else entry.step = Math.max(entry.step, relative);
      if (hit.score > entry.best) {
        entry.best = hit.score;
        entry.hit = hit;
      }
      if (hit.score >= floor) {
        entry.isRelevant = true;
        if (!isWhole && rank === 0) entry.isStepBest = true;
      }
      candidates.set(hit.id, entry);
    });
  };
  add(whole, true);
  for (const step of steps) add(step, false);
  const ranked = [...candidates.values()]
    .filter((entry) => entry.isRelevant)
    .sort((a, b) => b.whole + b.step - (a.whole + a.step) || b.whole - a.whole);
  const head = ranked.slice(0, stepBestPlaces);
  const displaced: Candidate<T>[] = [];
  for (const late of ranked.slice(stepBestPlaces).filter((entry) => entry.isStepBest)) {
    const out = head.findLastIndex((entry) => !entry.isStepBest);
    if (out < 0) break;
    displaced.push(...head.splice(out, 1));
    head.push(late);
  }
  const rest = ranked.slice(stepBestPlaces).filter((entry) => !head.includes(entry));
  const order = [...head, ...displaced.reverse(), ...rest];
  const out: T[] = [];
  for (const { hit, best } of order.slice(0, limit)) {
    const above = out.at(-1)?.score ?? Number.POSITIVE_INFINITY;
    out.push({ ...hit, score: Math.min(best, above) });
  }
  return out;
}
