import type { RetrievedTool, RetrieveToolsResult } from "../../index/retrieve-tools.ts";

/**
 * What retrieve_tools answers. One request (`query`) gets its ranked list at the top level, the
 * shape of SPEC §5, unchanged since before batches; several (`queries`) get one list each, in the
 * order asked, under `results`, with what concerns the whole call (notes such as a clamped top_k,
 * the tools registered in dynamic routing, the servers still connecting) beside them.
 */
interface RetrieveToolsBatch {
  results: RetrieveToolsResult[];
  notes?: string[];
  [key: string]: unknown;
}

export type RetrieveToolsAnswer = RetrieveToolsResult | RetrieveToolsBatch;

/** The answer for these lists; `notes` are the call's own (a clamped top_k), before each list's. */
export function answerOf(
  lists: RetrieveToolsResult[],
  isBatch: boolean,
  notes: readonly string[],
): RetrieveToolsAnswer {
  if (isBatch) return notes.length > 0 ? { results: lists, notes: [...notes] } : { results: lists };
  const [only] = lists as [RetrieveToolsResult];
  if (notes.length > 0) only.notes = [...notes, ...(only.notes ?? [])];
  return only;
}

export function listsOf(answer: RetrieveToolsAnswer): RetrieveToolsResult[] {
  return Array.isArray(answer.results)
    ? (answer as RetrieveToolsBatch).results
    : [answer as RetrieveToolsResult];
}

export const hasHits = (answer: RetrieveToolsAnswer) => listsOf(answer).some((list) => list.tools.length > 0);

/**
 * The tools an answer registers in dynamic routing, at most `limit`: rank by rank across its lists
 * (every list's best, then every list's second, …), each tool once. A session keeps the best
 * scores when a search brings more than its limit (tool-pool.ts), so five lists of five offered
 * whole to a pool of 15 left the requests that match weakly, often the short steps of a plan,
 * without a single tool; by rank, each request gets its best ones first.
 */
export function registrationOrder(answer: RetrieveToolsAnswer, limit: number): RetrievedTool[] {
  const lists = listsOf(answer).map((list) => list.tools);
  const chosen = new Map<string, RetrievedTool>();
  const depth = Math.max(0, ...lists.map((tools) => tools.length));
  for (let rank = 0; rank < depth && chosen.size < limit; rank++) {
    for (const tools of lists) {
      const tool = tools[rank];
      if (!tool) continue;
      const seen = chosen.get(tool.name);
      if (seen ? seen.score < tool.score : chosen.size < limit) chosen.set(tool.name, tool);
    }
  }
  return [...chosen.values()];
}
