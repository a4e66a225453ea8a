/**
 * Retrieval metrics over expected groups: each group is one tool the query needs, found when any
 * of its alternatives is retrieved. recall@k is the share of groups found in the top k (a query
 * that needs m tools scores at most k/m below k = m), MRR@10 takes the first hit, nDCG@10 gives
 * one unit of gain per group, all@10 is 1 when every group is in the top 10. These are the
 * definitions of the public etom-msc-bench set (docs/benchmarks.md), so figures compare with its
 * plain BM25 reference.
 */
export interface QueryScore {
  recall1: number;
  recall5: number;
  recall10: number;
  mrr10: number;
  ndcg10: number;
  all10: number;
}

export function scoreQuery(ranked: readonly string[], groups: readonly (readonly string[])[]): QueryScore {
  const groupOf = new Map<string, number[]>();
  groups.forEach((group, g) => {
    for (const id of group) groupOf.set(id, [...(groupOf.get(id) ?? []), g]);
  });
  const recallAt = (k: number) => {
    const covered = new Set<number>();
    for (const id of ranked.slice(0, k)) for (const g of groupOf.get(id) ?? []) covered.add(g);
    return groups.length === 0 ? 0 : covered.size / groups.length;
  };
  let mrr = 0;
  const firstHit = ranked.slice(0, 10).findIndex((id) => groupOf.has(id));
  if (firstHit >= 0) mrr = 1 / (firstHit + 1);
  let dcg = 0;
  const credited = new Set<number>();
  ranked.slice(0, 10).forEach((id, i) => {
    const fresh = (groupOf.get(id) ?? []).find((g) => !credited.has(g));
    if (fresh !== undefined) {
      credited.add(fresh);
      dcg += 1 / Math.log2(i + 2);
    }
  });
  let idcg = 0;
  for (let i = 0; i < Math.min(groups.length, 10); i++) idcg += 1 / Math.log2(i + 2);
  const recall10 = recallAt(10);
  return {
    recall1: recallAt(1),
    recall5: recallAt(5),
    recall10,
    mrr10: mrr,
    ndcg10: idcg === 0 ? 0 : dcg / idcg,
    all10: recall10 === 1 ? 1 : 0,
  };
}

export function meanScores(scores: readonly QueryScore[]): QueryScore {
  const sum = { recall1: 0, recall5: 0, recall10: 0, mrr10: 0, ndcg10: 0, all10: 0 };
  for (const score of scores)
    for (const key of Object.keys(sum) as (keyof QueryScore)[]) sum[key] += score[key];
  for (const key of Object.keys(sum) as (keyof QueryScore)[])
    sum[key] = scores.length ? sum[key] / scores.length : 0;
  return sum;
}
