#!/usr/bin/env bun
/**
 * How well the poisoning scan finds poisoned definitions and leaves real ones alone. Recall on the
 * labelled corpus (bench/poisoning-corpus.json: poisoned tools, prompts and resources, each with
 * the finding kind it must raise, and hand-written benign ones that must raise nothing), and false
 * positives on the 2,375 real tools of the eval set (MCPPROXY_EVAL_SET), scanned as the proxy scans them
 * (`scanTool({ name, description, inputSchema }, server, serverMentions(every server))`), with the
 * time that takes, and the slowest scan of a hostile 100,000-character description (the scan's
 * expressions must stay close to linear). Figures, not pass/fail: src/security/poisoning-scan.test.ts holds the corpus to
 * account.
 *
 *   bun bench/poisoning-bench.ts
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type Finding,
  type ServerMentions,
  scanPrompt,
  scanResource,
  scanTool,
  serverMentions,
} from "../src/security/poisoning-scan.ts";
import { evalSetPath, missingEvalSet } from "./eval-catalog.ts";
import { percentile } from "./metrics.ts";
import { ROOT } from "./proxy-process.ts";

export const CORPUS_FILE = join(ROOT, "bench", "poisoning-corpus.json");

export interface CorpusCase {
  id: string;
  kind: "tool" | "prompt" | "resource";
  item: Record<string, unknown>;
  server: string;
  expect: Finding["kind"] | "none";
  note: string;
}

interface RealTool {
  server: string;
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export function scanCase(entry: CorpusCase, mentions: ServerMentions): Finding[] {
  const item = entry.item as never;
  if (entry.kind === "prompt") return scanPrompt(item, entry.server, mentions);
  if (entry.kind === "resource") return scanResource(item, entry.server, mentions);
  return scanTool(item, entry.server, mentions);
}

/**
 * Sets written by someone who never saw the scanner (bench/poisoning-holdout*.json): the corpus
 * measures what the scanner was built to find, these how far that reaches.
 */
export const HELDOUT_FILES = ["poisoning-holdout.json", "poisoning-holdout-2.json"].map((name) =>
  join(ROOT, "bench", name),
);

export function runPoisoningBench(corpusFile = CORPUS_FILE, evalFile = evalSetPath(), timingRuns = 5) {
  const corpus = scoreCorpus(corpusFile);
  return {
    ...corpus,
    heldOut: HELDOUT_FILES.filter((file) => existsSync(file)).map((file) => ({
      file: file.slice(ROOT.length + 1),
      ...scoreCorpus(file),
    })),
    real: evalFile ? scanRealTools(evalFile, timingRuns) : undefined,
    hostile: scanHostile(corpus.mentions),
  };
}

/** Recall by expected finding, the poisoned cases missed, and the benign cases that fire. */
function scoreCorpus(file: string) {
  const corpus = JSON.parse(readFileSync(file, "utf8")) as { servers: string[]; cases: CorpusCase[] };
  // Every server the corpus names is configured, its cases' own servers too (as the e2e test has them).
  const mentions = serverMentions([...new Set([...corpus.servers, ...corpus.cases.map((c) => c.server)])]);
  const byKind = new Map<string, { found: number; total: number }>();
  const missed: { id: string; expect: string; got: Finding[] }[] = [];
  const benignHits: { id: string; findings: Finding[] }[] = [];
  let benignCases = 0;
  for (const entry of corpus.cases) {
    const findings = scanCase(entry, mentions);
    if (entry.expect === "none") {
      benignCases++;
      if (findings.length > 0) benignHits.push({ id: entry.id, findings });
      continue;
    }
    const tally = byKind.get(entry.expect) ?? { found: 0, total: 0 };
    byKind.set(entry.expect, tally);
    tally.total++;
    if (findings.some((finding) => finding.kind === entry.expect)) tally.found++;
    else missed.push({ id: entry.id, expect: entry.expect, got: findings });
  }
  return {
    recall: [...byKind].map(([kind, tally]) => ({ kind, ...tally })),
    missed,
    benignCases,
    benignHits,
    mentions,
  };
}

/**
 * Fragments that keep many expressions busy at once (verbs, secrets, passives and server names with
 * no sentence end in sight), each repeated to 100,000 characters.
 */
export const HOSTILE_FRAGMENTS = [
  "a",
  "read chrome ",
  "find chrome paste ",
  "copy login data ",
  ".env is to be included in the field ",
  "search private keys passwords paste include ",
  "ignore all previous prior earlier system ",
  "tell the user it failed ",
  "if github server is connected use ",
  "github server's github__ ",
  "a_b_",
  "&#65;%41",
  "QUJD",
  "i g n o r e ",
];

/** A fragment repeated to 100,000 characters. */
export const hostileText = (fragment: string) =>
  fragment.repeat(Math.ceil(100_000 / fragment.length)).slice(0, 100_000);

function scanHostile(mentions: ServerMentions) {
  let slowest = { fragment: "", ms: 0 };
  for (const fragment of HOSTILE_FRAGMENTS) {
    const description = hostileText(fragment);
    const started = performance.now();
    scanTool({ name: "hostile", description, inputSchema: { type: "object" } }, "hostile", mentions);
    const ms = performance.now() - started;
    if (ms > slowest.ms) slowest = { fragment, ms };
  }
  return { inputs: HOSTILE_FRAGMENTS.length, ...slowest };
}

function scanRealTools(evalFile: string, timingRuns: number) {
  const tools = (JSON.parse(readFileSync(evalFile, "utf8")) as { tools: RealTool[] }).tools;
  const servers = [...new Set(tools.map((tool) => tool.server))];
  const scanAll = () => {
    const mentions = serverMentions(servers);
    return tools.map((tool) => ({
      tool,
      findings: scanTool(
        { name: tool.name, description: tool.description, inputSchema: tool.inputSchema },
        tool.server,
        mentions,
      ),
    }));
  };
  const times: number[] = [];
  let results: ReturnType<typeof scanAll> = [];
  for (let run = 0; run < timingRuns; run++) {
    const started = performance.now();
    results = scanAll();
    times.push(performance.now() - started);
  }
  return {
    tools: tools.length,
    servers: servers.length,
    falsePositives: results
      .filter(({ findings }) => findings.length > 0)
      .map(({ tool, findings }) => ({ server: tool.server, name: tool.name, findings })),
    firstRunMs: times[0]!,
    medianMs: percentile(times, 50),
    runs: timingRuns,
  };
}

const percent = (part: number, whole: number) => `${((100 * part) / Math.max(whole, 1)).toFixed(1)}%`;
const describe = (findings: readonly Finding[]) => findings.map((f) => `${f.kind}: ${f.detail}`).join("; ");

export function formatPoisoningReport(report: ReturnType<typeof runPoisoningBench>): string {
  const found = report.recall.reduce((sum, row) => sum + row.found, 0);
  const total = report.recall.reduce((sum, row) => sum + row.total, 0);
  const lines = [
    "poisoning scan",
    "",
    `recall on the poisoned corpus: ${found}/${total} (${percent(found, total)})`,
    "",
    "| expected finding | found | recall |",
    "|---|---|---|",
    ...report.recall.map(
      (row) => `| ${row.kind} | ${row.found}/${row.total} | ${percent(row.found, row.total)} |`,
    ),
    "",
    report.missed.length === 0
      ? "missed: none"
      : `missed:\n${report.missed.map((m) => `  ${m.id} (expected ${m.expect}; got ${describe(m.got) || "nothing"})`).join("\n")}`,
    "",
    `hand-written benign cases with a finding: ${report.benignHits.length}/${report.benignCases}`,
    ...report.benignHits.map((hit) => `  ${hit.id}: ${describe(hit.findings)}`),
    "",
  ];
  for (const set of report.heldOut) {
    const setFound = set.recall.reduce((sum, row) => sum + row.found, 0);
    const setTotal = set.recall.reduce((sum, row) => sum + row.total, 0);
    lines.push(
      `held out (${set.file}, written without seeing the scanner): recall ${setFound}/${setTotal} (${percent(setFound, setTotal)}); ` +
        set.recall.map((row) => `${row.kind} ${row.found}/${row.total}`).join(", ") +
        `; benign cases with a finding ${set.benignHits.length}/${set.benignCases} (${percent(set.benignHits.length, set.benignCases)})`,
      ...set.benignHits.map((hit) => `  false positive ${hit.id}: ${describe(hit.findings)}`),
      "",
    );
  }
  const { hostile } = report;
  lines.push(
    `slowest of ${hostile.inputs} hostile 100,000-character descriptions: ${hostile.ms.toFixed(1)} ms ("${hostile.fragment}" repeated)`,
    "",
  );
  const real = report.real;
  if (!real) {
    lines.push(`(real tools skipped: ${missingEvalSet()})`);
    return lines.join("\n");
  }
  lines.push(
    `false positives on ${real.tools} real tools (${real.servers} servers): ${real.falsePositives.length} (${percent(real.falsePositives.length, real.tools)})`,
    ...real.falsePositives.map((fp) => `  ${fp.server} / ${fp.name}: ${describe(fp.findings)}`),
    "",
    `time to scan the ${real.tools} real tools: ${real.firstRunMs.toFixed(1)} ms first run, ${real.medianMs.toFixed(1)} ms median of ${real.runs}`,
  );
  return lines.join("\n");
}

if (import.meta.main) {
  process.stdout.write(`${formatPoisoningReport(runPoisoningBench())}\n`);
}
