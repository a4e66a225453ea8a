import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  cleanupAfterEach,
  connectStdio,
  eventually,
  FIXTURE,
  retrieve,
  runCli,
  type Sandbox,
} from "./helpers.ts";

/**
 * A server whose thousands of tools all change at once (an upgrade that rewords every
 * description) is re-indexed whole: Orama's bulk remove used to return after its first batch of
 * 500, so the insert that followed failed on tool 501 and the rest of the tools vanished from
 * search, in `index` and in `serve`, and stayed gone after a restart.
 */
setDefaultTimeout(180_000);
const cleanup = cleanupAfterEach();

const TOOLS = 3_000;
/** Every query names this many tools by a word only that tool's description has. */
const PER_QUERY = 50;
const wordOf = (era: "old" | "new", i: number) => `${era}word${String(i).padStart(4, "0")}`;

function writeTools(file: string, era: "old" | "new"): void {
  const tools = Array.from({ length: TOOLS }, (_, i) => ({
    name: `bulk_${i}`,
    description: `Handles ledger entry ${wordOf(era, i)} in the ${era} wording`,
    inputSchema: { type: "object", properties: { id: { type: "string" } } },
  }));
  writeFileSync(file, JSON.stringify(tools));
}

function setUp(sandbox: Sandbox) {
  const toolsFile = join(sandbox.dir, "tools.json");
  const starts = join(sandbox.dir, "starts.log");
  writeTools(toolsFile, "old");
  sandbox.writeConfig({
    mcpServers: {
      // trust auto: the reworded tools are searchable at once instead of waiting for approval.
      bulk: {
        command: process.execPath,
        args: [FIXTURE, "--tools-file", toolsFile],
        env: { FIXTURE_START_LOG: starts },
        trust: "auto",
        timeoutMs: 60_000,
      },
    },
  });
  return { toolsFile, starts };
}

const SEARCH_ENV = { MCPPROXY_TOP_K: String(PER_QUERY), MCPPROXY_MIN_SCORE: "0" };

/** Which of the tools retrieve_tools finds by their `era` word (PER_QUERY words a query). */
async function foundByWord(client: Client, era: "old" | "new"): Promise<Set<string>> {
  const found = new Set<string>();
  for (let start = 0; start < TOOLS; start += PER_QUERY) {
    const words = Array.from({ length: PER_QUERY }, (_, k) => wordOf(era, start + k));
    const result = await retrieve(client, words.join(" "), PER_QUERY);
    for (const tool of result.tools) {
      const i = Number(tool.tool.slice("bulk_".length));
      // Counted only when the tool holds this era's word: a stale description is not a find.
      if (tool.description.includes(wordOf(era, i))) found.add(tool.tool);
    }
  }
  return found;
}

/** Serve on the sandbox's data dir and report how many tools search finds by each era's words. */
async function searchCounts(sandbox: Sandbox): Promise<{ old: number; new: number }> {
  const proxy = await connectStdio(sandbox, SEARCH_ENV);
  try {
    return {
      old: (await foundByWord(proxy.client, "old")).size,
      new: (await foundByWord(proxy.client, "new")).size,
    };
  } finally {
    await proxy.close();
  }
}

describe("thousands of tools changing at once", () => {
  test("index re-indexes 3,000 reworded tools: search finds every one by its new text and none by its old", async () => {
    const sandbox = cleanup.sandbox();
    const { toolsFile } = setUp(sandbox);
    const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    const first = await runCli(["index", ...flags], sandbox.env());
    expect(first.stdout).toContain(`${TOOLS} added`);
    expect(first.code).toBe(0);

    writeTools(toolsFile, "new");
    const second = await runCli(["index", ...flags], sandbox.env());
    expect(second.stdout).toContain(`0 added, ${TOOLS} updated, 0 removed, 0 unchanged`);
    expect(second.code).toBe(0);
    expect(await searchCounts(sandbox)).toEqual({ old: 0, new: TOOLS });
  });

  test("serve re-indexes 3,000 reworded tools after list_changed, and a restart finds them all too", async () => {
    const sandbox = cleanup.sandbox();
    const { toolsFile, starts } = setUp(sandbox);
    const proxy = await connectStdio(sandbox, SEARCH_ENV);
    try {
      const indexed = await eventually(
        async () => (await foundByWord(proxy.client, "old")).size,
        (n) => n === TOOLS,
        60_000,
      );
      expect(indexed).toBe(TOOLS);
      writeTools(toolsFile, "new");
      const pid = Number(readFileSync(starts, "utf8").trim().split("\n").at(-1));
      process.kill(pid, "SIGUSR1");
      const outcome = await eventually(
        () => /.*re-index(ed|ing) bulk.*/.exec(proxy.stderr())?.[0],
        (line) => line !== undefined,
        60_000,
      );
      expect(outcome).toContain("re-indexed bulk after its tool list changed");
      expect((await foundByWord(proxy.client, "new")).size).toBe(TOOLS);
      expect((await foundByWord(proxy.client, "old")).size).toBe(0);
    } finally {
      await proxy.close();
    }
    expect(await searchCounts(sandbox)).toEqual({ old: 0, new: TOOLS });
  });
});
