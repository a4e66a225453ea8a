#!/usr/bin/env bun
/**
 * How the learned prior (src/stats/usage-prior.ts) behaves, as a replay: an agent asks the eval's
 * single-tool requests (L1, L2) of half A of the server split, round after round, calls the tool
 * ranked first, and the outcome is recorded as the proxy records it. The right tool succeeds
 * unless it is one of the "broken" tools (a random 10%, which always fail); a wrong tool succeeds
 * half the time (it runs, but does not do the task). Each round reports, for the replayed requests
 * and for half B's requests, which are never replayed: recall@1 against the eval's truth, and the
 * share of first picks that worked (right and not broken). Half B's round 0 is the cold start
 * (the prior is 0 by construction); the replayed requests learn within a round too. Seeded: a
 * rerun prints the same figures.
 *
 *   bun bench/experiments/prior-simulation.ts [--rounds 6] [--queries 600] [--rising]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createSearchIndex } from "../../src/index/search-index.ts";
import { toolFields } from "../../src/index/tool-document.ts";
import { openCallStats } from "../../src/stats/call-stats.ts";
import { outcomeEvidence, usagePrior, usagePriors } from "../../src/stats/usage-prior.ts";
import { seededRandom } from "../../tests/helpers.ts";
import { splitGroupOf } from "../eval-catalog.ts";
import { data, type EvalQuery, operationRanked, searchTextOf } from "../retrieval-experiment.ts";

export async function simulatePrior(rounds = 6, replayed = 600, rising = false) {
  const random = seededRandom(7);
  const index = createSearchIndex();
  const serverOf = new Map<string, string>();
  await index.add(
    data.tools.map((tool) => {
      const id = `${tool.server}/${tool.name}`;
      serverOf.set(id, tool.server);
      return { id, fields: toolFields(tool.server, tool) };
    }),
  );
  const broken = new Set(
    data.tools.filter(() => random() < 0.1).map((tool) => `${tool.server}/${tool.name}`),
  );
  const single = (data.queries as EvalQuery[]).filter(
    (q) => q.subset === "etom-L1" || q.subset === "etom-L2",
  );
  const train = single.filter((q) => splitGroupOf(q.expected_groups) === "half A").slice(0, replayed);
  const heldOut = single.filter((q) => splitGroupOf(q.expected_groups) === "half B");
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-prior-"));
  const stats = openCallStats(work, { persist: false });
  let clock = 0;
  // Always fresh figures; `rising`: the variant that also lets succeeding tools rise (not shipped).
  const prior = usagePriors(stats, () => (clock += 10_000), rising ? outcomeEvidence : usagePrior);
  const first = async (q: EvalQuery) => {
    const hits = await operationRanked(index, searchTextOf(q.query));
    const toolOf = (id: string) => id.slice(serverOf.get(id)!.length + 1);
    return hits
      .slice(0, 20)
      .map((hit) => ({ id: hit.id, score: hit.score + prior(serverOf.get(hit.id)!, toolOf(hit.id)) }))
      .sort((a, b) => b.score - a.score)[0]?.id;
  };
  const measure = async (queries: EvalQuery[], replay: boolean) => {
    let right = 0;
    let worked = 0;
    for (const q of queries) {
      const pick = await first(q);
      if (!pick) continue;
      const isRight = q.expected_groups.flat().includes(pick);
      const ok = isRight ? !broken.has(pick) : random() < 0.5;
      if (isRight) right++;
      if (isRight && !broken.has(pick)) worked++;
      if (replay) {
        const server = serverOf.get(pick)!;
        stats.record({
          server,
          tool: pick.slice(server.length + 1),
          ms: 1,
          outcome: ok ? "ok" : "isError",
          afterSearch: true,
        });
      }
    }
    return { recall1: right / queries.length, worked: worked / queries.length };
  };
  const curve: {
    round: number;
    replayed: { recall1: number; worked: number };
    heldOut: { recall1: number; worked: number };
  }[] = [];
  try {
    for (let round = 0; round <= rounds; round++) {
      const heldOutNow = await measure(heldOut, false);
      const replayedNow = await measure(train, true);
      curve.push({ round, replayed: replayedNow, heldOut: heldOutNow });
    }
  } finally {
    stats.close();
    rmSync(work, { recursive: true, force: true });
  }
  return { replayed: train.length, heldOut: heldOut.length, broken: broken.size, curve };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { rounds: { type: "string" }, queries: { type: "string" }, rising: { type: "boolean" } },
  });
  const report = await simulatePrior(
    Number(values.rounds ?? 6),
    Number(values.queries ?? 600),
    Boolean(values.rising),
  );
  const f = (n: number) => n.toFixed(3);
  const lines = [
    `learned prior (${values.rising ? "succeeding tools rise too: not shipped" : "failing tools sink, as shipped"}), replay of ${report.replayed} half-A requests (${report.broken} broken tools); ${report.heldOut} half-B requests never replayed`,
    "",
    "| round | replayed recall@1 | replayed first pick worked | held-out recall@1 | held-out first pick worked |",
    "|---|---|---|---|---|",
    ...report.curve.map(
      (r) =>
        `| ${r.round} | ${f(r.replayed.recall1)} | ${f(r.replayed.worked)} | ${f(r.heldOut.recall1)} | ${f(r.heldOut.worked)} |`,
    ),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}
