import { foldConfusables } from "./confusables.ts";
import { decodeEscapes } from "./encoded-text.ts";
import { withoutInvisible } from "./hidden-characters.ts";

/**
 * A text the way a reader (or a model) takes it in, for matching only: HTML character references
 * and percent-escapes decoded (`&#105;` and `%69` are "i"), invisible characters removed,
 * compatibility forms (fullwidth, mathematical, circled letters) and accents undone (NFKD, then
 * combining marks dropped), look-alike letters folded to ASCII, letters spelled out with spaces,
 * dots or dashes joined ("i g n o r e" → "ignore"), and every run of white space one space.
 */
export function normalizeForScan(text: string): string {
  return readingsForScan(text).words;
}

/**
 * The two readings the scan matches: `words`, where letters spaced evenly (nothing marks where one
 * word ends) are cut again at the words the patterns are made of, and `names`, where such a run
 * stays whole, for server names that are not English words ("p o s t g r e s" is "postgres", not
 * "post gres"). The same string twice when nothing is spelled out.
 */
export function readingsForScan(text: string): { words: string; names: string } {
  let out = decodeEscapes(text);
  if (!PLAIN_ASCII.test(out)) {
    out = foldConfusables(withoutInvisible(out).normalize("NFKD").replace(MARKS, ""));
  }
  SPACED_LETTERS.lastIndex = 0;
  if (!SPACED_LETTERS.test(out)) {
    const words = out.replace(WHITE_SPACE, " ").trim();
    return { words, names: words };
  }
  const words = out.replace(SPACED_LETTERS, joinLetters).replace(WHITE_SPACE, " ").trim();
  const names = out.replace(SPACED_LETTERS, joinWholeRun).replace(WHITE_SPACE, " ").trim();
  return { words, names };
}

const PLAIN_ASCII = /^[\t\n\r\x20-\x7E]*$/;
const MARKS = /\p{M}/gu;
const WHITE_SPACE = /\s+/g;

/**
 * Three or more single letters with the same separator between each: one space, or one of
 * . - _ * | + ~ with a space either side or none. Two spaces or more end a word, so
 * "i g n o r e   a l l" keeps its words apart.
 */
const SPACED_LETTERS = /(?<![A-Za-z0-9])[A-Za-z]( | ?[.\-_*|+~] ?)[A-Za-z](?:\1[A-Za-z])+(?![A-Za-z0-9])/g;

/**
 * Words the scan's patterns are made of, to put the spaces back into letters spaced out evenly,
 * where nothing marks where one word ends ("ignorepreviousinstructions"). Longest first, so a word
 * is not cut at a shorter one it starts with.
 */
const PATTERN_WORDS = new RegExp(
  [
    "instructions",
    "everything",
    "disregard",
    "previous",
    "override",
    "invoking",
    "earlier",
    "calling",
    "forward",
    "include",
    "always",
    "bypass",
    "before",
    "delete",
    "create",
    "ignore",
    "forget",
    "system",
    "prompt",
    "secret",
    "upload",
    "above",
    "prior",
    "rules",
    "using",
    "never",
    "first",
    "token",
    "were",
    "told",
    "read",
    "send",
    "post",
    "pass",
    "tool",
    "this",
    "user",
    "must",
    "tell",
    "file",
    "the",
    "all",
    "any",
    "you",
    "and",
    "not",
    "to",
  ].join("|"),
  "gi",
);

function joinWholeRun(run: string): string {
  return ` ${run.replace(/[^A-Za-z]/g, "")} `;
}

function joinLetters(run: string): string {
  const word = run.replace(/[^A-Za-z]/g, "");
  const spaced = run.includes(" ") && !/[^A-Za-z ]/.test(run);
  return ` ${spaced && word.length > 7 ? word.replace(PATTERN_WORDS, " $& ") : word} `;
}
