import {
  askedOperation,
  OPERATION_WORDS,
  operationOfWord,
  statedOperation,
} from "../../src/index/operation-agreement.ts";
import type { FormHit } from "../../src/index/search-index.ts";
import { STOP_WORDS, stem, tokenize } from "../../src/index/tokenizer.ts";

/**
 * An experiment of issue 23, item 3, not in the binary (docs/research/retrieval-lab-notes.md, "How a retrieval change is judged",
 * has its figures): the re-rank of the best exact-form matches, a weighted sum of five kinds of
 * evidence, each counted once.
 *  - exact: BM25F over the words as written (the first-rank precision a stemmer costs);
 *  - stem: BM25F over the stems alone, at a fraction of that weight;
 *  - name: the share of the tool name's words the request explains (its words by stem, and its
 *    operation word when the request asks for that operation): `get_record` is all explained by
 *    "show the details of record 7", `list_record_versions` is not;
 *  - operation: +1 when the operation the request asks for is the one the tool's name states,
 *    −1 when the name states another;
 *  - coverage: the IDF-weighted share of the request's words the tool has anywhere.
 */
export interface RerankWeights {
  exact: number;
  stem: number;
  name: number;
  operation: number;
  coverage: number;
}

export const RERANK_WEIGHTS: RerankWeights = {
  exact: 1,
  stem: 0.5,
  name: 0.3,
  operation: 0.1,
  coverage: 0.5,
};
/** How many of the best exact-form matches are re-ranked. */
export const RERANK_CANDIDATES = 50;

/** What a request says, as the re-rank reads it. */
export interface RequestEvidence {
  stems: ReadonlySet<string>;
  operation: string | undefined;
}

export function requestEvidence(request: string, vocabulary = OPERATION_WORDS): RequestEvidence {
  return {
    stems: new Set(tokenize(request).map(stem)),
    operation: askedOperation(request, vocabulary),
  };
}

/** The words of a tool name that can be explained: content words, and operation words even when stop words ("all"). */
export function nameWords(toolName: string, vocabulary = OPERATION_WORDS): string[] {
  return tokenize(toolName).filter((word) => !STOP_WORDS.has(word) || operationOfWord(word, vocabulary));
}

/** Whether the request explains a word of a tool's name: it has the word (by stem), or asks for the operation it names. */
export function explains(request: RequestEvidence, word: string, vocabulary = OPERATION_WORDS): boolean {
  if (request.stems.has(stem(word))) return true;
  const operation = operationOfWord(word, vocabulary);
  return operation !== undefined && operation === request.operation;
}

export function namePrecision(
  request: RequestEvidence,
  toolName: string,
  vocabulary = OPERATION_WORDS,
): number {
  const words = nameWords(toolName, vocabulary);
  if (words.length === 0) return 0;
  return words.filter((word) => explains(request, word, vocabulary)).length / words.length;
}

export function operationAgreement(
  request: RequestEvidence,
  toolName: string,
  vocabulary = OPERATION_WORDS,
): number {
  const stated = statedOperation(toolName, vocabulary);
  if (!request.operation || !stated) return 0;
  return stated === request.operation ? 1 : -1;
}

/**
 * The hits scored by the weighted sum, divided by the weights of the terms that can be positive,
 * so the score stays a 0–1 "how well this tool matches", best first.
 */
export function rerankByForm(
  request: string,
  hits: readonly FormHit[],
  toolName: (id: string) => string | undefined,
  weights: RerankWeights = RERANK_WEIGHTS,
  vocabulary = OPERATION_WORDS,
): { id: string; score: number }[] {
  const evidence = requestEvidence(request, vocabulary);
  const total = weights.exact + weights.stem + weights.name + weights.operation + weights.coverage;
  return hits
    .map((hit) => {
      const name = toolName(hit.id) ?? "";
      const sum =
        weights.exact * hit.exact +
        weights.stem * hit.stem +
        weights.name * namePrecision(evidence, name, vocabulary) +
        weights.operation * operationAgreement(evidence, name, vocabulary) +
        weights.coverage * hit.coverage;
      return { id: hit.id, score: Math.min(1, Math.max(0, sum / total)) };
    })
    .sort((a, b) => b.score - a.score);
}
