/**
 * Pieces the instruction patterns (poisoning-patterns.ts, secret-patterns.ts) are built from. The
 * patterns are matched on normalized text (normalize-text.ts: ASCII letters, one space between
 * words) and only read English: instructions written in other languages are out of scope, since
 * matching them would take a translation, not a pattern.
 *
 * Hostile definitions are up to 100,000 characters, so every pattern stays linear or close to it:
 * no nested quantifiers over overlapping classes, gaps bounded and kept within a sentence, and
 * where three things must meet in a sentence the later two are lookaheads from the first, so the
 * work per position adds up instead of multiplying.
 */
export interface InstructionPattern {
  what: string;
  pattern: RegExp;
  /** Checks a match the expression cannot judge alone; without it the first match counts. */
  accept?: (match: RegExpExecArray) => boolean;
}

/**
 * Patterns in groups, each group with a screen: one expression, the alternation of its members
 * (named groups made plain), tried on a text before them. Where a screen finds nothing (nearly every
 * text of a real tool) none of its members can match, so they are not tried. Bun's engine pays per
 * character and per pass about the same for one expression as for several joined, up to some
 * fifteen thousand characters of expression (measured on the 2,375 real tools: 90 ms for the
 * patterns one by one, 60 ms screened); past that, joining costs more, so the groups stay that size.
 */
export interface Screened {
  screens: readonly RegExp[];
  /** For each pattern, in order, the index of its screen. */
  screenOf: readonly number[];
}

export function screen(patterns: readonly InstructionPattern[], maxSource = 16_000): Screened {
  const groups: string[][] = [];
  const screenOf: number[] = [];
  let size = Number.POSITIVE_INFINITY;
  for (const { pattern } of patterns) {
    if (size + pattern.source.length > maxSource) {
      groups.push([]);
      size = 0;
    }
    groups.at(-1)!.push(pattern.source.replace(NAMED_GROUP, "(?:"));
    size += pattern.source.length;
    screenOf.push(groups.length - 1);
  }
  return { screens: groups.map((sources) => new RegExp(anyOf(sources), "i")), screenOf };
}

const NAMED_GROUP = /\(\?<(?=[A-Za-z])[\w]+>/g;

/** Stays within one sentence: a full stop followed by a space (or the end) ends it. */
export const gap = (max: number) => String.raw`(?:[^.]|\.(?=\S)){0,${max}}?`;

/** Words before a verb that make it a description: the passive ("the key is read …"), a negation ("it does not read …"). */
const DESCRIBING = String.raw`\b(?:is|are|was|were|be|been|being|gets?|got|not|never|cannot|can't|won't|doesn't|don't|didn't|shouldn't|mustn't|nor|no longer)`;

/**
 * One of `verbs` as an instruction, not a description of what happens or does not. The verb is
 * matched first and the words before it checked after, so the look back is paid only where a verb
 * stands.
 */
export const imperative = (verbs: string) => String.raw`\b${verbs}(?<!${DESCRIBING} ${verbs})`;

export const NOT = "(?:do not|don't|dont|never|must not|should not|shouldn't)(?: ever)?";

/**
 * Branches as one alternation, with what many of them start with (a word boundary, a dot, a slash)
 * tested once for all: at the positions inside a word (most positions) the engine then stops at one
 * test instead of one per branch.
 */
export function anyOf(sources: readonly string[]): string {
  const groups = new Map<string, string[]>(SHARED_STARTS.map((start) => [start, []]));
  const others: string[] = [];
  for (const branch of sources.flatMap(topLevelBranches)) {
    const start = SHARED_STARTS.find((prefix) => branch.startsWith(prefix));
    if (start === undefined) others.push(branch);
    else groups.get(start)!.push(branch.slice(start.length));
  }
  const shared = [...groups].filter(([, rest]) => rest.length > 0);
  return [...shared.map(([start, rest]) => `${start}(?:${rest.join("|")})`), ...others].join("|");
}

const SHARED_STARTS = ["\\b", "\\.", "/"];

/** An expression's alternatives at the top level: `a|(b|c)|[|]` is `a`, `(b|c)` and `[|]`. */
function topLevelBranches(source: string): string[] {
  const branches: string[] = [];
  let depth = 0;
  let isInClass = false;
  let start = 0;
  for (let i = 0; i < source.length; i++) {
    const char = source[i];
    if (char === "\\") i++;
    else if (isInClass) isInClass = char !== "]";
    else if (char === "[") isInClass = true;
    else if (char === "(") depth++;
    else if (char === ")") depth--;
    else if (char === "|" && depth === 0) {
      branches.push(source.slice(start, i));
      start = i + 1;
    }
  }
  branches.push(source.slice(start));
  return branches;
}

/** File extensions, which end a bare host name's look-alikes ("config.json" is not a host). */
const FILE_EXTENSION =
  "(?:json|txt|md|csv|ya?ml|xml|html?|log|pdf|png|jpe?g|gif|svg|zip|gz|tar|py|js|ts|sh|go|rs|java|rb|php|toml|ini|cfg|conf|env|lock|exe|dll)";

/** Somewhere to send data: a URL, an e-mail address, an IP address or a bare host name. */
export const EMAIL = String.raw`[\w.+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b`;
export const DESTINATION = anyOf([
  String.raw`(?:https?|ftp|wss?):\/\/[^\s"'<>)]+`,
  EMAIL,
  String.raw`\b(?:\d{1,3}\.){3}\d{1,3}\b`,
  String.raw`\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?!${FILE_EXTENSION}\b)[a-z]{2,24}(?![\w-]|\.[a-z0-9])`,
]);
