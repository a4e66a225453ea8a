import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupAfterEach, fixtureEntry, runCli, type Sandbox } from "./helpers.ts";

/** `mcpproxy eval` through the compiled binary, on the fixture server's saved index. */
setDefaultTimeout(60_000);
const scope = cleanupAfterEach();

async function indexedSandbox(): Promise<{ sandbox: Sandbox; flags: string[] }> {
  const sandbox = scope.sandbox();
  sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
  const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
  const indexed = await runCli(["index", ...flags], sandbox.env());
  expect(indexed.code).toBe(0);
  return { sandbox, flags };
}

describe("mcpproxy eval", () => {
  test("text queries: recall and MRR, each miss with what ranked above it, tools not in the index named", async () => {
    const { sandbox, flags } = await indexedSandbox();
    const file = join(sandbox.dir, "queries.txt");
    writeFileSync(
      file,
      [
        "# the fixture server's tools",
        "add two numbers => fx/add_numbers",
        "repeat my message back => fx__echo",
        "wait a little and then answer => fx/sleep_then_answer | fx/echo",
        "frobnicate the widget => fx/no_such_tool",
        "",
      ].join("\n"),
    );
    const result = await runCli(["eval", file, ...flags], sandbox.env());
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      "4 queries on 14 indexed tools (auto: BM25, fused with USE (vectorWeight 0.4) for weak requests, min score 0.05):",
    );
    expect(result.stdout).toContain("recall@1 0.750  recall@5 0.750  recall@10 0.750  MRR@10 0.750");
    expect(result.stdout).toContain('"frobnicate the widget"');
    expect(result.stdout).toContain("expected fx/no_such_tool: not in the top 10");
    expect(result.stdout).toContain(
      "not in the index (misspelt, or their server not indexed): fx/no_such_tool",
    );
  });

  test("JSON queries with --json and --compare: every query's ranking, and the same without the min score", async () => {
    const { sandbox, flags } = await indexedSandbox();
    const file = join(sandbox.dir, "queries.json");
    writeFileSync(
      file,
      JSON.stringify({
        queries: [
          { query: "add two numbers", expected: ["fx/add_numbers"] },
          {
            query: "return one big block of text and echo it",
            expected_groups: [["fx/big_result"], ["fx/echo"]],
          },
        ],
      }),
    );
    const result = await runCli(["eval", file, "--json", "--compare", ...flags], sandbox.env());
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as {
      runs: {
        setting: string;
        mode: string;
        minScore: number;
        metrics: { recall1: number; recall10: number };
        queries: { ranked: { id: string }[]; recall10: number }[];
      }[];
    };
    // The default, auto, is compared with BM25 alone and with a heavier vector side too.
    expect(report.runs.map((run) => run.setting)).toEqual([
      "as configured",
      "no min score",
      "BM25 only",
      "vectorWeight 0.5",
    ]);
    expect(report.runs.map((run) => run.mode)).toEqual(["auto", "auto", "lexical", "auto"]);
    expect(report.runs[1]!.minScore).toBe(0);
    const [configured] = report.runs;
    expect(configured!.queries[0]!.ranked[0]!.id).toBe("fx/add_numbers");
    expect(configured!.queries[1]!.recall10).toBe(1);
    expect(configured!.metrics.recall1).toBeGreaterThan(0);
  });

  test("a malformed queries file and an empty index are usage errors (exit 2) that say what to do", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    const bad = join(sandbox.dir, "bad.txt");
    writeFileSync(bad, "add two numbers\n");
    const malformed = await runCli(["eval", bad, ...flags], sandbox.env());
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('line 1: write "the request => server/tool | server/other_tool"');
    const good = join(sandbox.dir, "good.txt");
    writeFileSync(good, "add two numbers => fx/add_numbers\n");
    const empty = await runCli(["eval", good, ...flags], sandbox.env());
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("The index is empty: run `mcpproxy index` first.");
  });
});
