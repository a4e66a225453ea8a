import { namesSeveralSteps } from "./request-steps.ts";
import { tokenize } from "./tokenizer.ts";

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

/** Words that name an operation, by the operation they name. */
export type OperationVocabulary = Readonly<Record<string, string>>;

/**
 * Only words that name one operation vote. "show", "display" and "view" fit a list and a get alike
 * ("show all issues", "show issue 7"), so they are not here: letting "show" vote for get cost
 * one-vendor first-rank recall about 0.02 on a held-aside set (RETRIEVAL-NOTES.md, finding 12); on
 * the retrieval eval taking them out changed nothing beyond the interval (recall@1 −0.001
 * [−0.003, +0.000]). Letting "all"/"every" vote for list and "detail" for get cost MRR −0.002
 * [−0.005, −0.000] on one half of the server split, so they do not vote either.
 */
export const OPERATION_WORDS: OperationVocabulary = {
  list: "list lists listing enumerate",
  get: "get fetch retrieve read details describe",
  create: "create add new make insert register",
  update: "update modify change edit set rename patch",
  delete: "delete remove drop destroy erase",
  search: "search find query lookup look",
  send: "send post publish notify email message",
};

const tables = new WeakMap<OperationVocabulary, ReadonlyMap<string, string>>();
function operationOf(vocabulary: OperationVocabulary): ReadonlyMap<string, string> {
  let table = tables.get(vocabulary);
  if (!table) {
    table = new Map(
      Object.entries(vocabulary).flatMap(([operation, verbs]) =>
        verbs.split(" ").map((verb) => [verb, operation] as const),
      ),
    );
    tables.set(vocabulary, table);
  }
  return table;
}

/** The operation a word names, if it names one. */
export function operationOfWord(word: string, vocabulary = OPERATION_WORDS): string | undefined {
  return operationOf(vocabulary).get(word);
}

function operations(text: string, vocabulary: OperationVocabulary): string[] {
  const table = operationOf(vocabulary);
  const found: string[] = [];
  for (const word of tokenize(text)) {
    const operation = table.get(word);
    if (operation) found.push(operation);
  }
  return found;
}

/** The operation a request asks for: set only for a one-step request that names exactly one. */
export function askedOperation(query: string, vocabulary = OPERATION_WORDS): string | undefined {
  const named = new Set(operations(query, vocabulary));
  if (named.size !== 1 || namesSeveralSteps(query)) return undefined;
  return [...named][0];
}

/** The operation a tool's name states (`list_records` → list), if any. */
export function statedOperation(toolName: string, vocabulary = OPERATION_WORDS): string | undefined {
  return operations(toolName, vocabulary)[0];
}

/**
 * The hits re-scored by the operation their tool names state against the `asked` one, sorted
 * again, best first. `toolName` gives a hit's tool name.
 */
export function rescoreByOperation<T extends { id: string; score: number }>(
  asked: string,
  hits: T[],
  toolName: (id: string) => string | undefined,
  vocabulary = OPERATION_WORDS,
): T[] {
  return hits
    .map((hit) => {
      const name = toolName(hit.id);
      const stated = name === undefined ? undefined : statedOperation(name, vocabulary);
      if (stated === undefined) return hit;
      const score = Math.min(
        1,
        Math.max(0, hit.score + (stated === asked ? OPERATION_WEIGHT : -OPERATION_WEIGHT)),
      );
      return { ...hit, score };
    })
    .sort((a, b) => b.score - a.score);
}
