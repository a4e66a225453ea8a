import { STOP_WORDS, tokenize } from "./tokenizer.ts";

/**
 * A search score is the share of the searched text a tool matches (bm25-scoring.ts, `queryMass`), so
 * a fixed minimum means less evidence the longer the text: in a 100-word task even the right tool
 * matches a few percent of it. A fixed 0.05 there dropped the whole request's ranking in most
 * long tasks of a held-aside set (RETRIEVAL-NOTES.md, finding 9). Up to FLOOR_WORDS distinct
 * content words the floor is the configured share; past that it shrinks in proportion, so a long
 * text must match as much evidence as a FLOOR_WORDS-word request had to, not the same share of
 * far more. A short off-topic request is judged exactly as before.
 */
export const FLOOR_WORDS = 12;

/** The minimum score a hit of this text must reach: `minScore`, scaled down past FLOOR_WORDS words. */
export function relevanceFloor(text: string, minScore: number): number {
  if (minScore <= 0) return 0;
  const words = contentWordCount(text);
  return words <= FLOOR_WORDS ? minScore : (minScore * FLOOR_WORDS) / words;
}

/** How many distinct words of the text are not stop words. */
export function contentWordCount(text: string): number {
  return new Set(tokenize(text).filter((word) => !STOP_WORDS.has(word))).size;
}
