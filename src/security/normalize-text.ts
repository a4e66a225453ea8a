import { foldConfusables } from "./confusables.ts";
import { decodeEscapes } from "./encoded-text.ts";
import { withoutInvisible } from "./hidden-characters.ts";

/**
 * A text the way a reader (or a model) takes it in, for matching only: HTML character references
 * and percent-escapes decoded (`&#105;` and `%69` are "i"), invisible characters removed,
 * compatibility forms (fullwidth, mathematical, circled letters) and accents undone (NFKD, then
 * combining marks dropped), look-alike letters folded to ASCII, letters spelled out with spaces,
 * dots or dashes joined ("i g n o r e" → "ignore"), characters spaced out with punctuation among
 * them joined too ("h t t p s : / / evil.example" → "https://evil.example", "g o o d _ _ echo" →
 * "good__echo"), and every run of white space one space.
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
  const spaced = joinSpacedRuns(out);
  const forWords = spaced?.words ?? out;
  const forNames = spaced?.names ?? out;
  SPACED_LETTERS.lastIndex = 0;
  if (!SPACED_LETTERS.test(forWords) && forWords === forNames) {
    const words = forWords.replace(WHITE_SPACE, " ").trim();
    return { words, names: words };
  }
  const words = forWords.replace(SPACED_LETTERS, joinLetters).replace(WHITE_SPACE, " ").trim();
  const names = forNames.replace(SPACED_LETTERS, joinWholeRun).replace(WHITE_SPACE, " ").trim();
  return { words, names };
}

/**
 * Three or more single characters one space apart ("h t t p s : / /"). Those that are all letters
 * are SPACED_LETTERS' (words cut again at the patterns' words); those with anything else among
 * them (a URL, a tool's `server__tool` name, a path) are joined here.
 */
const SPACED_RUN = /(?<!\S)\S(?: \S){2,}(?!\S)/g;
const LETTERS_ONLY = /^[A-Za-z]*$/;
/**
 * What ends in one of these points into the word after it ("https://" + "evil.example", "good__" +
 * "echo"), what starts with one of these (or with a dot) into the word before it ("evil" +
 * ".example", "good" + "__echo"): a run and the word next to it are glued when one space parts
 * them. Not a final dot: "i . e ." ends an abbreviation, not a host.
 */
const POINTS_ON = /[/:_@\\-]$/;
const POINTS_BACK = /^[./:_@\\-]/;
/** How far to look for the word a run is glued to. */
const GLUE_REACH = 200;
/** Letters run together in a joined run, not part of a URL, a host or a path: cut at the patterns' words. */
const RUN_TOGETHER = /(?<![\w/:.@-])[A-Za-z]{8,}/g;

/**
 * The text with every spaced-out run that holds more than letters joined, as the two readings take
 * it (`words`: letters run together cut at the patterns' words; `names`: whole); undefined when it
 * has none. One pass over the runs, each glued to at most one word either side.
 */
function joinSpacedRuns(text: string): { words: string; names: string } | undefined {
  let words = "";
  let names = "";
  let at = 0;
  SPACED_RUN.lastIndex = 0;
  for (const match of text.matchAll(SPACED_RUN)) {
    let start = match.index;
    let end = start + match[0].length;
    let joined = match[0].replaceAll(" ", "");
    const before = /(?:^|\s)(\S+) $/.exec(text.slice(Math.max(at, start - GLUE_REACH), start))?.[1];
    const after = /^ (\S+)/.exec(text.slice(end, end + GLUE_REACH))?.[1];
    const glueBefore = before !== undefined && (POINTS_BACK.test(joined) || POINTS_ON.test(before));
    const glueAfter = after !== undefined && (POINTS_ON.test(joined) || POINTS_BACK.test(after));
    // Letters alone, glued to nothing: SPACED_LETTERS' to join.
    if (LETTERS_ONLY.test(joined) && !glueBefore && !glueAfter) continue;
    if (glueBefore) {
      start -= before.length + 1;
      joined = before + joined;
    }
    if (glueAfter) {
      end += after.length + 1;
      joined += after;
    }
    const kept = text.slice(at, start);
    words += kept + joined.replace(RUN_TOGETHER, (letters) => letters.replace(PATTERN_WORDS, " $& "));
    names += kept + joined;
    at = end;
  }
  if (at === 0) return undefined;
  return { words: words + text.slice(at), names: names + text.slice(at) };
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
