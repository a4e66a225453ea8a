import { tokenizer as oramaTokenizer } from "@orama/orama/components";

/**
 * Splits text the way tool names and descriptions are written: camelCase and acronyms
 * (`getHTTPResponse` → get, http, response), snake_case, kebab-case, dotted names and prose
 * all become lowercase alphanumeric words. Used for both documents and queries so they agree.
 */
const CAMEL_BOUNDARY = /([a-z0-9])([A-Z])|([A-Z]+)([A-Z][a-z])/g;
const NON_ALPHANUMERIC = /[^\p{L}\p{N}]+/u;

export function tokenize(text: string): string[] {
  const spaced = text.replace(CAMEL_BOUNDARY, (_m, a, b, c, d) => (a ? `${a} ${b}` : `${c} ${d}`));
  const tokens: string[] = [];
  for (const word of spaced.toLowerCase().split(NON_ALPHANUMERIC)) if (word) tokens.push(word);
  return tokens;
}

/** Tool and parameter names as the words they are made of: `list_pull_requests` → "list pull requests". */
export function splitIdentifier(identifier: string): string {
  return tokenize(identifier).join(" ");
}

/**
 * Function words that carry no evidence about which tool is meant. Agents phrase requests as
 * sentences ("I need you to …, and then …"); these words would otherwise match nearly every tool.
 * Action words (get, list, create, send, search, use) are deliberately not here.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a about after again all also am an and any are as at be been before being both but by can could " +
    "did do does doing each few for from further had has have having he her here hers him his how i if " +
    "in into is it its itself just me more most my myself no nor not now of off on once only or other " +
    "our ours out over own please same she should so some such than that the their theirs them then " +
    "there these they this those through to too under until up very was we were what when where which " +
    "while who whom why will with would you your yours"
  ).split(" "),
);

const porter = oramaTokenizer.createTokenizer({ language: "english", stemming: true }).stemmer!;
const STEM_CACHE_LIMIT = 100_000;
const stems = new Map<string, string>();

/** Orama's English (Porter) stemmer, cached: the same few thousand words recur in every query. */
export function stem(word: string): string {
  let stemmed = stems.get(word);
  if (stemmed === undefined) {
    if (stems.size >= STEM_CACHE_LIMIT) stems.clear();
    stemmed = word.length > 2 && !/\d/.test(word) ? porter(word) : word;
    stems.set(word, stemmed);
  }
  return stemmed;
}

/** Marks a stem among the index terms; tokenize() never yields it, so a stem never equals a word. */
const STEM_MARK = "~";

/** Whether an index term is a stem (`~stem`), not a word as written. */
export function isStemTerm(term: string): boolean {
  return term.startsWith(STEM_MARK);
}

/**
 * The index terms of a text: every word that is not a stop word, both as written and as its stem
 * (`~stem`). Documents and queries both go through it, so a request matches a tool's exact words
 * and, more weakly, their other forms: an exact match scores both terms, a match by stem only
 * the stem's, whose IDF is lower. Stems alone lost first-rank precision where tool families
 * differ by exactly what a stemmer erases ("records" of a list tool, "a single record" of a get
 * tool); on the retrieval eval the pair gained recall@5 and MRR beyond their bootstrap interval
 * and cost no subset (docs/search.md).
 */
export function analyze(text: string): string[] {
  const terms: string[] = [];
  for (const word of tokenize(text)) {
    if (STOP_WORDS.has(word)) continue;
    terms.push(word, STEM_MARK + stem(word));
  }
  return terms;
}
