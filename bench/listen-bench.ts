#!/usr/bin/env bun
/**
 * What 2026-07-28 listen streams cost.
 *  1. Delivery: a 2025 server's resource update (its `touch_resource` tool, called through the
 *     proxy) until it reaches a pinned v2 client's listen stream and a v1 client's session, both
 *     subscribed to it, against the call alone; over HTTP and (the stream only) over stdio.
 *  2. The list watch's once-a-second look (src/app/list-watch.ts) over a catalog of `--servers`
 *     servers with `--prompts` prompts each, a tenth of them held: the time of one look when
 *     nothing changed, and of the full look made when something may have.
 *
 *   bun bench/listen-bench.ts [--updates 200] [--servers 50] [--prompts 20]
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { createListLook, listStamps } from "../src/app/list-watch.ts";
import { openCapabilityApprovals } from "../src/index/capability-approvals.ts";
import { silentLogger } from "../src/log.ts";
import { createCapabilitySchema, openCapabilityStore } from "../src/store/sqlite/capability-store.ts";
import type { UpstreamPool } from "../src/upstream/upstream-pool.ts";
import { startHttpProxy } from "../tests/helpers.ts";
import { percentile } from "./metrics.ts";
import { benchEnv, ROOT, requireBinary } from "./proxy-process.ts";

const CAPS = join(ROOT, "tests", "fixtures", "capabilities-server.ts");
const HOSTNAME = "file:///etc/hostname";
const FEDERATED = `mcpproxy://caps/${HOSTNAME}`;
const MODERN = "2026-07-28";

/** Resolves at the next update a handler pushes to `waiters`. */
function nextOf(waiters: (() => void)[]) {
  return new Promise<void>((resolve) => waiters.push(resolve));
}

function modernClient(waiters: (() => void)[]) {
  const client = new Client(
    { name: "listen-bench", version: "1" },
    { versionNegotiation: { mode: { pin: MODERN } } },
  );
  client.setNotificationHandler("notifications/resources/updated", () => waiters.shift()?.());
  return client;
}

const touch = (client: Client | V1Client) =>
  client.callTool({
    name: "call_tool",
    arguments: { name: "caps__touch_resource", arguments: { uri: HOSTNAME } },
  });

async function measureDelivery(updates: number) {
  const work = mkdtempSync(join(tmpdir(), "mcpproxy-listen-"));
  const configPath = join(work, "config.json");
  // At info level: the HTTP proxy's address line is how startHttpProxy learns its port.
  const env = benchEnv(join(work, "home"), { MCPPROXY_LOG_LEVEL: "info" });
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: {
        caps: {
          command: process.execPath,
          args: [CAPS],
          env: { CAPS_SUBSCRIBE_LOG: join(work, "subscribe.log") },
        },
      },
    }),
  );
  const sandbox = {
    dir: work,
    home: join(work, "home"),
    dataDir: join(work, "data"),
    configPath,
    writeConfig: () => configPath,
    env: () => env,
    cleanup: () => undefined,
  };
  const rows: Record<string, number[]> = {
    "HTTP call alone": [],
    "HTTP call + update on the listen stream": [],
    "HTTP call + update on the v1 session": [],
    "stdio call + update on the listen stream": [],
  };
  const proxy = await startHttpProxy(sandbox);
  const streamWaiters: (() => void)[] = [];
  const sessionWaiters: (() => void)[] = [];
  const modern = modernClient(streamWaiters);
  const legacy = new V1Client({ name: "listen-bench-v1", version: "1" });
  legacy.setNotificationHandler(ResourceUpdatedNotificationSchema, async () => sessionWaiters.shift()?.());
  const stdioWaiters: (() => void)[] = [];
  const stdio = modernClient(stdioWaiters);
  try {
    await modern.connect(new StreamableHTTPClientTransport(proxy.url));
    await legacy.connect(new V1StreamableHTTPClientTransport(proxy.url));
    for (;;) {
      const { resources } = await modern.listResources();
      if (resources.some((resource) => resource.uri === FEDERATED)) break;
      await Bun.sleep(50);
    }
    await modern.listen({ resourceSubscriptions: [FEDERATED] });
    await legacy.subscribeResource({ uri: FEDERATED });
    await stdio.connect(
      new StdioClientTransport({
        command: requireBinary(),
        args: ["serve", "--config", configPath, "--data-dir", join(work, "data-stdio")],
        env,
        stderr: "ignore",
      }),
    );
    await stdio.listen({ resourceSubscriptions: [FEDERATED] });
    for (let i = 0; i < updates; i++) {
      let started = performance.now();
      const both = [nextOf(streamWaiters), nextOf(sessionWaiters)];
      await touch(modern);
      rows["HTTP call alone"]!.push(performance.now() - started);
      await both[0];
      rows["HTTP call + update on the listen stream"]!.push(performance.now() - started);
      await both[1];
      rows["HTTP call + update on the v1 session"]!.push(performance.now() - started);
      started = performance.now();
      const onStdio = nextOf(stdioWaiters);
      await touch(stdio);
      await onStdio;
      rows["stdio call + update on the listen stream"]!.push(performance.now() - started);
    }
  } finally {
    await Promise.allSettled([modern.close(), legacy.close(), stdio.close()]);
    await proxy.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}

function measureListWatch(servers: number, prompts: number, looks: number) {
  const db = new Database(":memory:");
  createCapabilitySchema(db);
  let trust: "auto" | "pin" = "auto";
  const approvals = openCapabilityApprovals(
    openCapabilityStore(db, { writable: true, approvalsWritable: true }),
    { trustOf: () => trust, quarantinesNew: () => false, findingsOf: () => [], blockFindings: false },
    () => true,
    silentLogger,
  );
  const names = Array.from({ length: servers }, (_, i) => `server${i}`);
  const listing = (server: string, changed: boolean) =>
    Array.from({ length: prompts }, (_, i) => ({
      name: `prompt${i}`,
      description: `Prompt ${i} of ${server}${changed && i % 10 === 0 ? ", reworded" : ""}`,
    }));
  for (const server of names) approvals.review(server, "prompt", listing(server, false));
  trust = "pin";
  for (const server of names) approvals.review(server, "prompt", listing(server, true));
  const capabilities = { prompts: {}, resources: {} };
  const pool = {
    live: () =>
      names.map((server) => ({
        server,
        connection: { client: { getServerCapabilities: () => capabilities } },
      })),
    status: () => names.map((name) => ({ name, connectedSince: 1 })),
    liveVersion: () => 1,
  } as unknown as Pick<UpstreamPool, "live" | "liveVersion" | "status">;
  const held = approvals.quarantined().length;
  const time = (look: () => unknown) =>
    Array.from({ length: looks }, () => {
      const started = performance.now();
      look();
      return performance.now() - started;
    });
  const options = { pool, approvals: () => approvals };
  // Unchanged since the last look (every second but those after an approval or a server's coming
  // or going), and the full look those take.
  return { held, unchanged: time(createListLook(options)), full: time(() => listStamps(options)) };
}

const say = (line: string) => process.stdout.write(`${line}\n`);
const { values } = parseArgs({
  options: {
    updates: { type: "string", default: "200" },
    servers: { type: "string", default: "50" },
    prompts: { type: "string", default: "20" },
  },
});
const updates = Number(values.updates);
const fmt = (ms: number) => ms.toFixed(2);
say(`Resource update delivery, ${updates} updates (ms, p50 / p95):`);
for (const [row, times] of Object.entries(await measureDelivery(updates)))
  say(`  ${row.padEnd(44)} ${fmt(percentile(times, 50))} / ${fmt(percentile(times, 95))}`);
const servers = Number(values.servers);
const prompts = Number(values.prompts);
const watch = measureListWatch(servers, prompts, 200);
say(`List watch, one look over ${servers} servers × ${prompts} prompts (${watch.held} held), ms p50 / p95:`);
for (const [row, times] of [
  ["nothing changed (the cheap look)", watch.unchanged],
  ["something may have (the full look)", watch.full],
] as const)
  say(`  ${row.padEnd(44)} ${fmt(percentile(times, 50))} / ${fmt(percentile(times, 95))}`);
