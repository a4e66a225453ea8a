import { stem } from "../../src/index/tokenizer.ts";
import { explains, nameWords, type RequestEvidence } from "./form-rerank.ts";

/**
 * An experiment of issue 23, item 4, not in the binary (docs/research/retrieval-lab-notes.md, "How a retrieval change is judged",
 * has its figures). Sibling tools: the same server, names that differ in one or two words (`list_issues`,
 * `get_issue`, `create_issue`, `update_issue`). They share their topic, so their descriptions
 * and parameters match a request alike, and what tells them apart is the words their names do
 * not share. On a held-aside one-vendor catalogue about half the first-rank misses lost to such
 * a sibling; words found only in one sibling's description favoured the wrong one 24 to 11
 * (RETRIEVAL-NOTES.md, finding 13).
 */
export const SIBLING_MAX_DIFFERENT = 2;
/** Families are formed among this many first hits: a sibling far down the list is no contender. */
export const SIBLING_DEPTH = 10;

const stemsOf = (words: readonly string[]) => new Set(words.map(stem));

/** Whether two tool names of one server are siblings: a word in common, at most two of their own on each side. */
export function areSiblings(nameA: string, nameB: string): boolean {
  const a = stemsOf(nameWords(nameA));
  const b = stemsOf(nameWords(nameB));
  const onlyA = [...a].filter((s) => !b.has(s)).length;
  const onlyB = [...b].filter((s) => !a.has(s)).length;
  const shared = a.size - onlyA;
  return shared > 0 && onlyA + onlyB > 0 && onlyA <= SIBLING_MAX_DIFFERENT && onlyB <= SIBLING_MAX_DIFFERENT;
}

/**
 * How the words that set a tool's name apart from its family vote: +1 for each the request
 * explains, −1 for each it does not. Words every member shares, and every description, say
 * nothing here.
 */
export function distinctionVote(
  request: RequestEvidence,
  name: string,
  shared: ReadonlySet<string>,
  unexplainedCost = UNEXPLAINED_COST,
): number {
  let vote = 0;
  for (const word of nameWords(name)) {
    if (shared.has(stem(word))) continue;
    vote += explains(request, word) ? 1 : -unexplainedCost;
  }
  return vote;
}

export const UNEXPLAINED_COST = 1;

/**
 * The hits with each family of siblings among the first `depth` re-ordered by their names'
 * distinguishing words (distinctionVote; ties keep their order). A family keeps the places it
 * held, with their scores, so tools outside it do not move: only which sibling stands where.
 */
export function decideSiblings<T extends { id: string; score: number }>(
  hits: readonly T[],
  request: RequestEvidence,
  toolOf: (id: string) => { server: string; tool: string } | undefined,
  depth = SIBLING_DEPTH,
  unexplainedCost = UNEXPLAINED_COST,
): T[] {
  const head = hits.slice(0, depth);
  const refs = head.map((hit) => toolOf(hit.id));
  const family = head.map((_, i) => i);
  const root = (i: number): number => (family[i] === i ? i : root(family[i]!));
  for (let i = 0; i < head.length; i++) {
    for (let j = i + 1; j < head.length; j++) {
      const a = refs[i];
      const b = refs[j];
      if (a && b && a.server === b.server && areSiblings(a.tool, b.tool)) family[root(j)] = root(i);
    }
  }
  const members = new Map<number, number[]>();
  for (let i = 0; i < head.length; i++) members.set(root(i), [...(members.get(root(i)) ?? []), i]);
  const out = [...hits];
  for (const places of members.values()) {
    if (places.length < 2) continue;
    const names = places.map((i) => refs[i]!.tool);
    const sets = names.map((name) => stemsOf(nameWords(name)));
    // The server's own words (a request names the platform) are shared by the family too.
    const shared = new Set([...sets[0]!].filter((s) => sets.every((set) => set.has(s))));
    for (const word of nameWords(refs[places[0]!]!.server)) shared.add(stem(word));
    const votes = new Map(
      places.map((i, k) => [i, distinctionVote(request, names[k]!, shared, unexplainedCost)]),
    );
    const order = [...places].sort((x, y) => votes.get(y)! - votes.get(x)! || x - y);
    places.forEach((place, k) => {
      out[place] = { ...head[order[k]!]!, score: head[place]!.score };
    });
  }
  return out;
}
