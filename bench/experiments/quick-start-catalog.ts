#!/usr/bin/env bun
/**
 * The quick start's eval (examples/eval-queries.json) as an eval-set file that
 * bench/retrieval-experiment.ts can read: the tools of the servers of examples/mcp_config.json,
 * listed live over stdio (npx fetches the servers from the npm registry), with the queries, their
 * groups and subsets ("first", "everyday", "multi-step"). The split by server means little for
 * three servers: read its ALL and subsets.
 *
 *   bun bench/experiments/quick-start-catalog.ts OUT.json
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const out = process.argv[2];
if (!out) {
  process.stderr.write("usage: bun bench/experiments/quick-start-catalog.ts OUT.json\n");
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), "quick-start-"));
const servers: Record<string, string[]> = {
  everything: ["-y", "@modelcontextprotocol/server-everything"],
  memory: ["-y", "@modelcontextprotocol/server-memory"],
  filesystem: ["-y", "@modelcontextprotocol/server-filesystem", dir],
};
const tools: unknown[] = [];
for (const [server, args] of Object.entries(servers)) {
  const client = new Client({ name: "quick-start-catalog", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: "npx",
      args,
      env: { ...process.env, MEMORY_FILE_PATH: join(dir, "memory.jsonl") } as Record<string, string>,
      stderr: "ignore",
    }),
  );
  const listed = await client.listTools();
  for (const tool of listed.tools) tools.push({ server, ...tool });
  process.stderr.write(`${server}: ${listed.tools.length} tools\n`);
  await client.close();
}
const { queries } = JSON.parse(readFileSync("examples/eval-queries.json", "utf8")) as {
  queries: { query: string; expected: string[]; expected_groups?: string[][]; subset: string }[];
};
writeFileSync(
  out,
  JSON.stringify({
    name: "quick start (examples/eval-queries.json)",
    tools,
    queries: queries.map((q, i) => ({
      id: `quick-${i + 1}`,
      query: q.query,
      expected_groups: q.expected_groups ?? [q.expected],
      subset: q.subset,
    })),
  }),
);
