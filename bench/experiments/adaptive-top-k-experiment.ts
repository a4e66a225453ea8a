#!/usr/bin/env bun
/**
 * Adaptive top-k (src/index/adaptive-top-k.ts) judged on the retrieval eval: the schemas (and
 * tokens) an answer carries against recall@1, recall@5 and MRR, with and without the cut, on each
 * half of the split by server and per level.
 *
 *  1. Every request is ranked once as retrieve_tools ranks it: the eval's tools in a real
 *     in-process catalog, the defaults (BM25, min score 0.05, top_k 5).
 *  2. Candidate rules are applied to those lists. Each family's constant is chosen on half A only:
 *     the fewest schemas per request whose recall@5 loses nothing beyond the paired 95% bootstrap
 *     interval on half A, overall or in any level.
 *  3. The chosen rule is checked on half B, and the shipped one is run through retrieveRankedAll
 *     (the code retrieve_tools runs) for the table.
 *
 * Tokens are estimated as the characters of the answer's JSON (the structured answer an agent
 * reads: query, tools with their schemas, notes) divided by 4, the same way with and without.
 * MRR is over the returned list (at most 5 tools), so a right tool cut off counts as not found.
 *
 *   bun bench/experiments/adaptive-top-k-experiment.ts [EVAL.json]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adaptiveCount, clauseCount, FALL_OFF, fallOffCount } from "../../src/index/adaptive-top-k.ts";
import { searchedText } from "../../src/index/query-text.ts";
import { requestSteps } from "../../src/index/request-steps.ts";
import type { RetrieveToolsResult } from "../../src/index/retrieve-tools.ts";
import { openToolCatalog, type ToolCatalog } from "../../src/index/tool-catalog.ts";
import { silentLogger } from "../../src/log.ts";
import { RESERVED_TOOL_NAMES } from "../../src/server/tools/builtin-tools.ts";
import { retrieveRankedAll } from "../../src/server/tools/ranked-retrieve.ts";
import { type EvalQuery, loadEvalCatalog, requireEvalSet, splitGroupOf, toolId } from "../eval-catalog.ts";
import { bootstrapMean, type QueryScore, scoreQuery } from "../metrics.ts";

const TOP_K = 5;
const MIN_SCORE = 0.05;
const LEVELS = ["etom-L1", "etom-L2", "etom-L3", "etom-L4"];
const HALVES = ["half A", "half B"] as const;

interface Ranked {
  query: EvalQuery;
  half: string;
  text: string;
  result: RetrieveToolsResult;
}

/** A rule: how many of a list's hits (scores best first) to keep for the searched text. */
type Rule = (scores: number[], text: string) => number;

interface Outcome extends QueryScore {
  schemas: number;
  /** 1 when the answer carries one or two schemas. */
  fewSchemas: number;
  tokens: number;
}

const tokensOf = (answer: unknown) => JSON.stringify(answer).length / 4;

function outcome(ranked: Ranked, result: RetrieveToolsResult): Outcome {
  const ids = result.tools.map((tool) => toolId(tool.server, tool.tool));
  return {
    ...scoreQuery(ids, ranked.query.expected_groups),
    schemas: result.tools.length,
    fewSchemas: result.tools.length <= 2 ? 1 : 0,
    tokens: tokensOf(result),
  };
}

/** The list cut by `rule`, as the answer would carry it (without the note the binary adds). */
function cutBy(ranked: Ranked, rule: Rule | undefined): RetrieveToolsResult {
  if (!rule) return ranked.result;
  const kept = rule(
    ranked.result.tools.map((tool) => tool.score),
    ranked.text,
  );
  return { ...ranked.result, tools: ranked.result.tools.slice(0, kept) };
}

const hasSteps = (text: string) => requestSteps(text).length > 0;
/** The candidate families: how a list falls off, and what a request of several things keeps. */
const FAMILIES: Record<string, (constant: number) => Rule> = {
  "fall-off only": (r) => (scores) => fallOffCount(scores, r),
  "fall-off, steps never cut": (r) => (scores, text) =>
    hasSteps(text) ? scores.length : fallOffCount(scores, r),
  "fall-off, one per clause": (r) => (scores, text) =>
    Math.min(scores.length, Math.max(fallOffCount(scores, r), clauseCount(text))),
  "fall-off, both (shipped)": (r) => (scores, text) => adaptiveCount(scores, text, r),
  "consecutive drop over 1−c, both": (c) => (scores, text) =>
    hasSteps(text)
      ? scores.length
      : Math.min(scores.length, Math.max(consecutiveDrop(scores, c), clauseCount(text))),
};
const CONSTANTS = [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9];

/** Kept up to the first hit under `c` of the one before it. */
function consecutiveDrop(scores: readonly number[], c: number): number {
  let kept = Math.min(1, scores.length);
  while (kept < scores.length && scores[kept]! >= c * scores[kept - 1]!) kept++;
  return kept;
}

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const signed = (n: number) => (n >= 0 ? "+" : "") + n.toFixed(3);

/** Whether recall@5 loses nothing beyond the paired interval on `qs`, overall and per level. */
function holds(all: Ranked[], rule: Rule): boolean {
  return [undefined, ...LEVELS].every((level) => {
    const qs = all.filter((r) => !level || r.query.subset === level);
    const diffs = qs.map((r) => outcome(r, cutBy(r, rule)).recall5 - outcome(r, r.result).recall5);
    return qs.length === 0 || bootstrapMean(diffs).high >= 0;
  });
}

async function loadCatalog(
  file: string,
  dataDir: string,
): Promise<{ catalog: ToolCatalog; queries: EvalQuery[] }> {
  const data = loadEvalCatalog(file);
  const catalog = await openToolCatalog({
    dataDir,
    toolNameLimit: 60,
    reservedNames: RESERVED_TOOL_NAMES,
    logger: silentLogger,
  });
  const byServer = new Map<string, typeof data.tools>();
  for (const tool of data.tools) byServer.set(tool.server, [...(byServer.get(tool.server) ?? []), tool]);
  for (const [server, tools] of byServer) {
    await catalog.syncServer(
      server,
      tools.map((tool) => ({ ...tool, inputSchema: tool.inputSchema ?? { type: "object" } })),
    );
  }
  return { catalog, queries: data.queries };
}

function row(label: string, outcomes: Outcome[]): string {
  const cell = (metric: keyof Outcome, digits = 3) => {
    const { mean: m, low, high } = bootstrapMean(outcomes.map((o) => o[metric]));
    return `${m.toFixed(digits)} (${low.toFixed(digits)}–${high.toFixed(digits)})`;
  };
  return `| ${label} | ${outcomes.length} | ${cell("schemas", 2)} | ${cell("fewSchemas", 2)} | ${cell("tokens", 0)} | ${cell("recall1")} | ${cell("recall5")} | ${cell("mrr10")} |`;
}

function deltaRow(label: string, base: Outcome[], other: Outcome[]): string {
  const cell = (metric: keyof Outcome) => {
    const d = bootstrapMean(other.map((o, i) => o[metric] - base[i]![metric]));
    // Marked only where lower is worse: fewer schemas and tokens are the point.
    const isQuality = metric !== "schemas" && metric !== "tokens";
    const mark = !isQuality ? "" : d.low > 0 ? " ▲" : d.high < 0 ? " ▼" : "";
    return `${signed(d.mean)} [${signed(d.low)}, ${signed(d.high)}]${mark}`;
  };
  return `| ${label} | ${cell("schemas")} | ${cell("tokens")} | ${cell("recall1")} | ${cell("recall5")} | ${cell("mrr10")} |`;
}

export async function runAdaptiveExperiment(file: string): Promise<string[]> {
  const out: string[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), "mcpproxy-adaptive-"));
  const { catalog, queries } = await loadCatalog(file, dataDir);
  try {
    const plain = await retrieveRankedAll(
      catalog,
      undefined,
      queries.map((q) => q.query),
      { topK: TOP_K, minScore: MIN_SCORE },
    );
    const shipped = await retrieveRankedAll(
      catalog,
      undefined,
      queries.map((q) => q.query),
      { topK: TOP_K, minScore: MIN_SCORE, isAdaptive: true },
    );
    const ranked: Ranked[] = queries.map((query, i) => ({
      query,
      half: splitGroupOf(query.expected_groups),
      text: searchedText(plain[i]!.query),
      result: plain[i]!,
    }));
    const half = (name: string) => ranked.filter((r) => r.half === name);

    out.push(`Step 2: each family's constant chosen on half A (${half("half A").length} requests)`, "");
    out.push(
      "| family | constant | schemas/request on A | recall@5 holds on A | holds on B |",
      "|---|---|---|---|---|",
    );
    let chosen: { family: string; constant: number; schemas: number } | undefined;
    for (const [family, make] of Object.entries(FAMILIES)) {
      const passing = CONSTANTS.map((constant) => {
        const rule = make(constant);
        const schemas = mean(half("half A").map((r) => cutBy(r, rule).tools.length));
        return { constant, schemas, ok: holds(half("half A"), rule) };
      }).filter((candidate) => candidate.ok);
      const best = passing.sort((a, b) => a.schemas - b.schemas)[0];
      if (!best) {
        out.push(`| ${family} | none holds | | | |`);
        continue;
      }
      const onB = holds(half("half B"), make(best.constant));
      out.push(`| ${family} | ${best.constant} | ${best.schemas.toFixed(2)} | yes | ${onB ? "yes" : "no"} |`);
      if (!chosen || best.schemas < chosen.schemas)
        chosen = { family, constant: best.constant, schemas: best.schemas };
    }
    out.push(
      "",
      `Chosen on half A: ${chosen?.family} at ${chosen?.constant}; shipped: fall-off ${FALL_OFF}, steps never cut, one per clause.`,
    );

    out.push(
      "",
      `Step 3: top_k ${TOP_K}, without and with the shipped cut (retrieveRankedAll; 95% bootstrap intervals)`,
      "",
    );
    out.push(
      "| requests | n | schemas/request | share with 1–2 | tokens/request | recall@1 | recall@5 | MRR |",
      "|---|---|---|---|---|---|---|---|",
    );
    const groups: [string, number[]][] = [];
    for (const name of [...HALVES, "cross"]) {
      groups.push([name, ranked.flatMap((r, i) => (r.half === name ? [i] : []))]);
      if (name === "cross") continue;
      for (const level of LEVELS) {
        groups.push([
          `${name} ${level.slice(5)}`,
          ranked.flatMap((r, i) => (r.half === name && r.query.subset === level ? [i] : [])),
        ]);
      }
    }
    groups.push(["ALL", ranked.map((_, i) => i)]);
    const without = ranked.map((r) => outcome(r, r.result));
    const withCut = ranked.map((r, i) => outcome(r, shipped[i]!));
    for (const [name, at] of groups) {
      out.push(
        row(
          `${name}, without`,
          at.map((i) => without[i]!),
        ),
      );
      out.push(
        row(
          `${name}, with`,
          at.map((i) => withCut[i]!),
        ),
      );
    }
    out.push("", "Paired difference, with − without (mean [95% CI]; ▼ a loss beyond the interval)", "");
    out.push("| requests | schemas | tokens | recall@1 | recall@5 | MRR |", "|---|---|---|---|---|---|");
    for (const [name, at] of groups) {
      out.push(
        deltaRow(
          name,
          at.map((i) => without[i]!),
          at.map((i) => withCut[i]!),
        ),
      );
    }
    const verdict = HALVES.map((name) => {
      const at = groups.find(([group]) => group === name)![1];
      const d = bootstrapMean(at.map((i) => withCut[i]!.recall5 - without[i]!.recall5));
      return `${name} Δrecall@5 ${signed(d.mean)} [${signed(d.low)}, ${signed(d.high)}]`;
    });
    const isDefaultWorthy = HALVES.every((name) => holds(half(name), (s, t) => adaptiveCount(s, t)));
    out.push(
      "",
      `${verdict.join("; ")}: ${isDefaultWorthy ? "holds on both halves, default-worthy" : "does not hold on both halves: opt-in"}.`,
    );
    return out;
  } finally {
    await catalog.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const file = requireEvalSet(process.argv[2]);
  process.stdout.write(`${(await runAdaptiveExperiment(file)).join("\n")}\n`);
}
