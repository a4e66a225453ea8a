import { STOP_WORDS, tokenize } from "../tokenizer.ts";
import { readUseLiteVocabulary } from "./use-lite-graph.ts";

/**
 * Whether the built-in encoder has words for a text: at least half of its content words are whole
 * words of the encoder's vocabulary (6,064 of its 8,000 pieces are). The encoder turns a text of
 * words it has never seen whole (keyboard mashing, ids, a language it was not trained on) into a
 * vector near many tools: "zzyzx qwfp" reached a cosine of 0.40 with the quick start's `get-sum`,
 * "lorem ipsum dolor sit amet" 0.51, above the 0.3 that keeps a fused ranking, where requests
 * the encoder does read and that fit no tool stay under it. Such a text is searched lexically
 * only. Names and rarer words are often split into pieces ("alice", "memo"), so half is enough:
 * "remember that Alice works at Acme" is read.
 */
export function useLiteKnows(text: string): boolean {
  const words = tokenize(text).filter((word) => !STOP_WORDS.has(word));
  if (words.length === 0) return false;
  const vocabulary = wholeWords();
  const known = words.filter((word) => vocabulary.has(word)).length;
  return known * 2 >= words.length;
}

let vocabularyWords: ReadonlySet<string> | undefined;

/** The vocabulary's whole words (its pieces that start a word and are one), read once when first asked. */
function wholeWords(): ReadonlySet<string> {
  vocabularyWords ??= new Set(
    readUseLiteVocabulary().flatMap(([piece]) =>
      piece.startsWith("\u2581") && piece.length > 1 ? [piece.slice(1)] : [],
    ),
  );
  return vocabularyWords;
}
