import { namesSeveralSteps } from "./request-steps.ts";
import { STOP_WORDS, tokenize } from "./tokenizer.ts";

/**
 * Tools of one family share their words and differ by the operation their name states:
 * `list_records`, `get_record`, `create_record`. When a request names one operation ("show me
 * the details of record 7" → get), a tool whose name states the same operation gets a small
 * bonus and one that states another a small penalty. Only for one-step requests naming exactly
 * one operation: a multi-step task names an operation per step, and each step's tools must stay.
 *
 * On the retrieval eval (bench/retrieval-experiment.ts) this gained recall@1 +0.009 [+0.004,
 * +0.015] and MRR +0.005 [+0.003, +0.009], beyond the interval on both halves of the server
 * split, and cost no subset beyond its interval; it follows what was learned on a held-aside set of one vendor's
 * tool families, where most first-rank misses lost to a sibling with another operation.
 */
export const OPERATION_WEIGHT = 0.03;
/** How many of the best lexical matches are re-scored. */
export const OPERATION_CANDIDATES = 30;

const VERBS: Readonly<Record<string, string>> = {
  list: "list lists listing enumerate",
  get: "get fetch retrieve show read details describe view",
  create: "create add new make insert register",
  update: "update modify change edit set rename patch",
  delete: "delete remove drop destroy erase",
  search: "search find query lookup look",
  send: "send post publish notify email message",
};
const OPERATION_OF: ReadonlyMap<string, string> = new Map(
  Object.entries(VERBS).flatMap(([operation, verbs]) =>
    verbs.split(" ").map((verb) => [verb, operation] as const),
  ),
);

function operations(text: string): string[] {
  const found: string[] = [];
  for (const word of tokenize(text)) {
    if (STOP_WORDS.has(word)) continue;
    const operation = OPERATION_OF.get(word);
    if (operation) found.push(operation);
  }
  return found;
}

/** The operation a request asks for: set only for a one-step request that names exactly one. */
export function askedOperation(query: string): string | undefined {
  const named = new Set(operations(query));
  if (named.size !== 1 || namesSeveralSteps(query)) return undefined;
  return [...named][0];
}

/** The operation a tool's name states (`list_records` → list), if any. */
export function statedOperation(toolName: string): string | undefined {
  return operations(toolName)[0];
}

/**
 * The hits re-scored by the operation their tool names state against the `asked` one, sorted
 * again, best first. `toolName` gives a hit's tool name.
 */
export function rescoreByOperation<T extends { id: string; score: number }>(
  asked: string,
  hits: T[],
  toolName: (id: string) => string | undefined,
): T[] {
  return hits
    .map((hit) => {
      const name = toolName(hit.id);
      const stated = name === undefined ? undefined : statedOperation(name);
      if (stated === undefined) return hit;
      const score = Math.min(
        1,
        Math.max(0, hit.score + (stated === asked ? OPERATION_WEIGHT : -OPERATION_WEIGHT)),
      );
      return { ...hit, score };
    })
    .sort((a, b) => b.score - a.score);
}
