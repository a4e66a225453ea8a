#!/usr/bin/env bun
/**
 * What dynamic routing costs a search: retrieve_tools on the eval catalog (2,375 tools on 491
 * servers, served over HTTP), asked of a `call-tool` proxy and a `dynamic` one in turn, in one run.
 * The dynamic proxy's client acts on list_changed by re-listing its tools, as a listening client
 * does; only the retrieve_tools round trip is timed.
 *
 *   bun bench/routing-bench.ts [FILE.json] [--queries N]
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { launchCatalog } from "./catalog-launcher.ts";
import { loadEvalCatalog, requireEvalSet } from "./eval-catalog.ts";
import { percentile } from "./metrics.ts";
import { benchEnv, runBinary, startProxyStdio } from "./proxy-process.ts";

export interface RoutingReport {
  tools: number;
  queries: number;
  callTool: { p50: number; p95: number };
  dynamic: { p50: number; p95: number; notifications: number };
}

export async function runRoutingBench(file: string, queryCount = 500): Promise<RoutingReport> {
  const catalog = loadEvalCatalog(file);
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-routing-"));
  const launched = await launchCatalog(resolve(file), catalog, work);
  try {
    const env = benchEnv(join(work, "home"));
    const indexed = await runBinary(
      ["index", "--config", launched.configPath, "--data-dir", join(work, "a")],
      env,
    );
    if (indexed.code !== 0) throw new Error(`mcpproxy index failed:\n${indexed.stdout}\n${indexed.stderr}`);
    cpSync(join(work, "a"), join(work, "b"), { recursive: true });
    const plain = await startProxyStdio(launched.configPath, join(work, "a"), env);
    const dynamic = await startProxyStdio(launched.configPath, join(work, "b"), {
      ...env,
      MCPPROXY_ROUTING_TYPE: "dynamic",
    });
    let notifications = 0;
    dynamic.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      notifications++;
      await dynamic.client.listTools();
    });
    const queries = catalog.queries.slice(0, queryCount).map((q) => q.query);
    const times = { plain: [] as number[], dynamic: [] as number[] };
    try {
      // Both proxies connect to every upstream when they start: let that finish first.
      await Bun.sleep(5_000);
      for (const query of queries.slice(0, 20)) {
        await plain.client.callTool({ name: "retrieve_tools", arguments: { query } });
        await dynamic.client.callTool({ name: "retrieve_tools", arguments: { query } });
      }
      for (const [at, query] of queries.entries()) {
        const pair = [
          ["plain", plain],
          ["dynamic", dynamic],
        ] as const;
        // Alternate which goes first, so neither always runs while the other's client is still re-listing.
        for (const [label, proxy] of at % 2 === 0 ? pair : [...pair].reverse()) {
          const started = performance.now();
          await proxy.client.callTool({ name: "retrieve_tools", arguments: { query } });
          times[label].push(performance.now() - started);
        }
      }
    } finally {
      await plain.close();
      await dynamic.close();
    }
    return {
      tools: catalog.tools.length,
      queries: queries.length,
      callTool: { p50: percentile(times.plain, 50), p95: percentile(times.plain, 95) },
      dynamic: { p50: percentile(times.dynamic, 50), p95: percentile(times.dynamic, 95), notifications },
    };
  } finally {
    await launched.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

export function formatRoutingReport(report: RoutingReport): string {
  const f = (n: number) => n.toFixed(2);
  return (
    `retrieve_tools on ${report.tools} tools, ${report.queries} queries each, interleaved, stdio: ` +
    `call-tool routing p50 ${f(report.callTool.p50)} ms / p95 ${f(report.callTool.p95)} ms; ` +
    `dynamic routing p50 ${f(report.dynamic.p50)} ms / p95 ${f(report.dynamic.p95)} ms ` +
    `(${report.dynamic.notifications} list_changed notifications, each followed by a re-list); ` +
    `p50 ratio ${(report.dynamic.p50 / report.callTool.p50).toFixed(2)}x`
  );
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    options: { queries: { type: "string" } },
    allowPositionals: true,
  });
  const file = requireEvalSet(positionals[0]);
  process.stdout.write(
    `${formatRoutingReport(await runRoutingBench(file, Number(values.queries ?? 500)))}\n`,
  );
}
