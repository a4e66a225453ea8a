/**
 * `--routing all` at scale (npm run bench:all-tools): a catalog of 10,000 tools on 100 servers
 * (pinned, so every look asks the approvals), in process. Reports what the once-a-second look
 * costs (`check`), building the whole list cold (definitions read from SQLite) and warm (after a
 * change, definitions cached), and walking it in pages as a client does.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openToolCatalog } from "../src/index/tool-catalog.ts";
import { silentLogger } from "../src/log.ts";
import { createAllTools } from "../src/routing/all-tools.ts";
import { pageOf } from "../src/routing/list-pages.ts";
import { RESERVED_TOOL_NAMES } from "../src/server/tools/builtin-tools.ts";

const SERVERS = 100;
const PER_SERVER = 100;
const RUNS = 30;

const dataDir = mkdtempSync(join(tmpdir(), "all-tools-bench-"));
const catalog = await openToolCatalog({
  dataDir,
  toolNameLimit: 60,
  reservedNames: RESERVED_TOOL_NAMES,
  logger: silentLogger,
  approvalPolicy: {
    trustOf: () => "pin",
    quarantinesNew: () => false,
    findingsOf: () => [],
    blockFindings: false,
  },
});
const toolsOf = (server: number, version = 0) =>
  Array.from({ length: PER_SERVER }, (_, i) => ({
    name: `action_${i}`,
    title: `Action ${i} of service ${server}`,
    description: `Does action number ${i} on service ${server}, version ${version}: reads or writes one record.`,
    inputSchema: {
      type: "object",
      properties: { id: { type: "string", description: "the record" }, limit: { type: "integer" } },
      required: ["id"],
    },
    annotations: { readOnlyHint: i % 2 === 0 },
  }));
for (let s = 0; s < SERVERS; s++) await catalog.syncServer(`service${s}`, toolsOf(s));

const allTools = createAllTools({ alwaysLoad: 10 });
const time = (work: () => unknown) => {
  const started = performance.now();
  work();
  return performance.now() - started;
};
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const coldMs = time(() => allTools.list(catalog));
allTools.check(catalog);
const checks = Array.from({ length: RUNS }, () => time(() => allTools.check(catalog)));
await catalog.syncServer("service0", toolsOf(0, 1));
allTools.check(catalog);
// A change makes the next list a rebuild; the definitions of unchanged tools stay cached. The
// changed tools are quarantined (pinned), so 200 of the 10,000 leave the list.
await catalog.syncServer("service1", toolsOf(1, 2));
allTools.check(catalog);
const warmMs = time(() => allTools.list(catalog));
const list = allTools.list(catalog);
let pages = 0;
let cursor: string | undefined;
const walkMs = time(() => {
  do {
    const page = pageOf([], list, cursor)!;
    cursor = page.nextCursor;
    pages++;
  } while (cursor);
});
const bytes = list.reduce((sum, item) => sum + item.bytes, 0);
process.stdout.write(
  `${JSON.stringify(
    {
      tools: list.length,
      listBytes: bytes,
      pages,
      checkMsP50: Number(median(checks).toFixed(2)),
      checkMsMax: Number(Math.max(...checks).toFixed(2)),
      coldListMs: Number(coldMs.toFixed(1)),
      warmListMs: Number(warmMs.toFixed(1)),
      walkPagesMs: Number(walkMs.toFixed(1)),
    },
    null,
    2,
  )}\n`,
);
await catalog.close();
rmSync(dataDir, { recursive: true, force: true });
