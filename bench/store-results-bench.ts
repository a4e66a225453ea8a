#!/usr/bin/env bun
import { parseArgs } from "node:util";
/**
 * A large result kept for a 2026-07-28 client, read back through the replica that kept it (from its
 * memory) and through another one (from the shared store, a slice per page): two `serve --store`
 * replicas on a temporary PostgreSQL, the same 5 MB result (numbered lines with 2- and 4-byte
 * characters, the fixture's big_result). Reports the time of the tools/call that keeps it (the
 * write to the store included; beside it, the same call by a 2025 session, whose results stay in
 * the replica's memory) and of reading it whole in pages of `--page` characters by
 * read_result, on each replica; the pages must rebuild the original or the run fails. Bounded:
 * `--runs` (default 3, at most 10), `--bytes` at most 20 MB. Nothing is asserted about time.
 *
 *   bun bench/store-results-bench.ts [--bytes 5000000] [--runs 3] [--page 32768]
 */
import { Client as ModernClient, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { connectHttp, createSandbox, FIXTURE, fixtureEntry } from "../tests/helpers.ts";
import { type Replica, startReplica } from "../tests/support/replicas.ts";
import { freshDatabase } from "../tests/support/store-databases.ts";
import { startTempPostgres } from "../tests/support/temp-postgres.ts";
import { percentile } from "./metrics.ts";

const { values } = parseArgs({
  options: { bytes: { type: "string" }, runs: { type: "string" }, page: { type: "string" } },
});
const BYTES = Math.min(Number(values.bytes ?? 5_000_000), 20_000_000);
const RUNS = Math.max(1, Math.min(Number(values.runs ?? 3), 10));
const PAGE = Number(values.page ?? 32_768);
const ARGS = { bytes: BYTES, varied: true };

type Answer = {
  content: { type: string; text?: string; uri?: string }[];
  isError?: boolean;
  _meta?: Record<string, { nextOffset?: number }>;
};

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await run();
  return { value, ms: performance.now() - started };
}

async function modernClient(replica: Replica): Promise<Client> {
  const client = new ModernClient(
    { name: "store-results-bench", version: "1" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new StreamableHTTPClientTransport(replica.url));
  return client as unknown as Client;
}

async function readAll(client: Client, uri: string): Promise<{ text: string; pages: number }> {
  let text = "";
  let pages = 0;
  let offset: number | undefined = 0;
  while (offset !== undefined) {
    if (++pages > 100_000) throw new Error("too many pages");
    const read = (await client.callTool({
      name: "read_result",
      arguments: { uri, offset, length: PAGE },
    })) as Answer;
    if (read.isError) throw new Error(read.content[0]?.text);
    text += read.content[0]?.text ?? "";
    offset = read._meta?.["mcpproxy/page"]?.nextOffset;
  }
  return { text, pages };
}

async function original(): Promise<string> {
  const client = new Client({ name: "direct", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE] }));
  try {
    return ((await client.callTool({ name: "big_result", arguments: ARGS })) as Answer).content[0]!.text!;
  } finally {
    await client.close();
  }
}

const pg = await startTempPostgres();
const sandbox = createSandbox();
const replicas: Replica[] = [];
const clients: Client[] = [];
try {
  sandbox.writeConfig({
    mcpServers: { fx: fixtureEntry() },
    mcpproxy: { resultPageChars: Math.max(PAGE, 32_768) },
  });
  const url = await freshDatabase(pg);
  for (const name of ["1", "2"]) replicas.push(await startReplica(sandbox, url, name));
  const [one, two] = [await modernClient(replicas[0]!), await modernClient(replicas[1]!)];
  clients.push(one, two);
  const whole = await original();
  const legacy = await connectHttp(replicas[0]!.url);
  clients.push(legacy);
  const rows = {
    callMs: [] as number[],
    legacyCallMs: [] as number[],
    sameMs: [] as number[],
    otherMs: [] as number[],
  };
  let pages = 0;
  for (let run = 0; run < RUNS; run++) {
    const keep = (client: Client) => async () => {
      for (let tries = 0; tries < 100; tries++) {
        const answer = (await client.callTool(
          { name: "call_tool", arguments: { name: "fx__big_result", arguments: ARGS } },
          undefined,
          { timeout: 120_000 },
        )) as Answer;
        if (!answer.isError) return answer;
        await Bun.sleep(200); // the replica's catalog is still filling
      }
      throw new Error("fx__big_result never answered");
    };
    const call = await timed(keep(one));
    const legacyCall = await timed(keep(legacy));
    const uri = call.value.content.find((block) => block.type === "resource_link")!.uri!;
    const same = await timed(() => readAll(one, uri));
    const other = await timed(() => readAll(two, uri));
    if (same.value.text !== whole || other.value.text !== whole)
      throw new Error("the pages do not rebuild the original result");
    pages = other.value.pages;
    // The first call may also wait for the catalog.
    if (run > 0 || RUNS === 1) rows.callMs.push(call.ms);
    rows.legacyCallMs.push(legacyCall.ms);
    rows.sameMs.push(same.ms);
    rows.otherMs.push(other.ms);
  }
  const p50 = (list: number[]) => Math.round(percentile(list, 50) * 10) / 10;
  process.stdout.write(
    `${JSON.stringify(
      {
        resultBytes: Buffer.byteLength(whole),
        characters: whole.length,
        runs: RUNS,
        pageChars: PAGE,
        pages,
        keepingCallMsP50: {
          modernWrittenToStore: p50(rows.callMs),
          legacyMemoryOnly: p50(rows.legacyCallMs),
        },
        readWholeMsP50: { sameReplica: p50(rows.sameMs), otherReplica: p50(rows.otherMs) },
        perPageMsP50: {
          sameReplica: Math.round((p50(rows.sameMs) / pages) * 100) / 100,
          otherReplica: Math.round((p50(rows.otherMs) / pages) * 100) / 100,
        },
      },
      null,
      2,
    )}\n`,
  );
} finally {
  for (const client of clients) await client.close().catch(() => {});
  for (const replica of replicas) await replica.stop();
  sandbox.cleanup();
  await pg.cleanup();
}
