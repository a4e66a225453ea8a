#!/usr/bin/env bun
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
/**
 * A large tool result kept out of the context (issue 25 item 6): the same 5 MB result (numbered
 * lines with multi-byte characters, from the fixture server's big_result) through `mcpproxy serve`
 * over stdio with spilling off and on (the defaults: 64 KiB bound, 4096-character head). Reports
 * the bytes of the tools/call answer (its JSON, what a client hands the model) and the time of the
 * call, then the cost of reading the whole result back in pages, by resources/read and by
 * read_result: pages, bytes over the wire, time. The pages rebuilt must equal the original, or
 * the run fails. Bounded: `--runs` (default 3, at most 10) of each, `--bytes` at most 20 MB.
 *
 *   bun bench/large-result-bench.ts [--bytes 5000000] [--runs 3] [--page 32768]
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { FIXTURE } from "../tests/helpers.ts";
import { percentile } from "./metrics.ts";
import { benchEnv, startProxyStdio } from "./proxy-process.ts";

const { values } = parseArgs({
  options: { bytes: { type: "string" }, runs: { type: "string" }, page: { type: "string" } },
});
const BYTES = Math.min(Number(values.bytes ?? 5_000_000), 20_000_000);
const RUNS = Math.max(1, Math.min(Number(values.runs ?? 3), 10));
const PAGE = Number(values.page ?? 32_768);

type Answer = { content: { type: string; text?: string; uri?: string }[]; _meta?: Record<string, unknown> };
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const args = { name: "fx__big_result", arguments: { bytes: BYTES, varied: true } };

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await run();
  return { value, ms: performance.now() - started };
}

/** Every page of `uri`, by resources/read or read_result: the text rebuilt, pages and bytes over the wire. */
async function readAll(client: Client, uri: string, by: "resource" | "tool") {
  let text = "";
  let wire = 0;
  let pages = 0;
  let offset: number | undefined = 0;
  while (offset !== undefined) {
    if (++pages > 100_000) throw new Error("too many pages");
    const read: { _meta?: Record<string, unknown> } =
      by === "resource"
        ? await client.readResource({ uri: `${uri}?offset=${offset}&length=${PAGE}` })
        : await client.callTool({ name: "read_result", arguments: { uri, offset, length: PAGE } });
    wire += jsonBytes(read);
    const page = read as { contents?: { text?: string }[]; content?: { text?: string }[] };
    text += (by === "resource" ? page.contents?.[0]?.text : page.content?.[0]?.text) ?? "";
    offset = (read._meta?.["mcpproxy/page"] as { nextOffset?: number } | undefined)?.nextOffset;
  }
  return { text, wire, pages };
}

const dir = mkdtempSync(join(tmpdir(), "mcpproxy-large-result-"));
try {
  const config = join(dir, "config.json");
  writeFileSync(
    config,
    JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [FIXTURE] } } }),
  );
  const off = await startProxyStdio(
    config,
    join(dir, "data-off"),
    benchEnv(join(dir, "home"), { MCPPROXY_RESULT_SPILL_BYTES: "0", MCPPROXY_STATS: "false" }),
  );
  const on = await startProxyStdio(
    config,
    join(dir, "data-on"),
    benchEnv(join(dir, "home"), { MCPPROXY_RESULT_PAGE_CHARS: String(PAGE), MCPPROXY_STATS: "false" }),
  );
  try {
    const rows = {
      offMs: [] as number[],
      onMs: [] as number[],
      resourceMs: [] as number[],
      toolMs: [] as number[],
    };
    let offBytes = 0;
    let onBytes = 0;
    let resource = { wire: 0, pages: 0 };
    let tool = { wire: 0, pages: 0 };
    for (let run = 0; run < RUNS; run++) {
      const whole = await timed(() => off.client.callTool({ name: "call_tool", arguments: args }));
      const original = (whole.value as Answer).content[0]!.text!;
      offBytes = jsonBytes(whole.value);
      const kept = await timed(() => on.client.callTool({ name: "call_tool", arguments: args }));
      onBytes = jsonBytes(kept.value);
      const uri = (kept.value as Answer).content.find((block) => block.type === "resource_link")!.uri!;
      const byResource = await timed(() => readAll(on.client, uri, "resource"));
      const byTool = await timed(() => readAll(on.client, uri, "tool"));
      if (byResource.value.text !== original || byTool.value.text !== original)
        throw new Error("the pages do not rebuild the original result");
      rows.offMs.push(whole.ms);
      rows.onMs.push(kept.ms);
      rows.resourceMs.push(byResource.ms);
      rows.toolMs.push(byTool.ms);
      resource = byResource.value;
      tool = byTool.value;
    }
    const p50 = (list: number[]) => Math.round(percentile(list, 50) * 10) / 10;
    process.stdout.write(
      `${JSON.stringify(
        {
          resultBytes: BYTES,
          runs: RUNS,
          pageChars: PAGE,
          toolsCallAnswerBytes: {
            spillOff: offBytes,
            spillOn: onBytes,
            ratio: Math.round(offBytes / onBytes),
          },
          toolsCallMsP50: { spillOff: p50(rows.offMs), spillOn: p50(rows.onMs) },
          readBack: {
            resourcesRead: { pages: resource.pages, wireBytes: resource.wire, msP50: p50(rows.resourceMs) },
            readResult: { pages: tool.pages, wireBytes: tool.wire, msP50: p50(rows.toolMs) },
          },
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await off.close();
    await on.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
