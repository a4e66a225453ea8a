import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  cleanupAfterEach,
  connectHttp,
  connectStdio,
  eventually,
  fixtureEntry,
  runCli,
  startHttpProxy,
} from "./helpers.ts";

/**
 * Per-server call limits through the compiled binary (src/limits/): a server limited to N calls at
 * once never has more than N in flight, the queue is served first come first served, every call
 * ends (admitted, or refused with the limit and when to retry), a rate limit holds over a bounded
 * run, a cancelled queued call never reaches the server, and the limits and refusals show in
 * tools_stat, /health, upstream_servers, /metrics and `mcpproxy stats`.
 */
setDefaultTimeout(120_000);
const scope = cleanupAfterEach();

type Client = Awaited<ReturnType<typeof connectStdio>>["client"];

const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");

const held = (client: Client, server: string, ms: number, tag: string, signal?: AbortSignal) =>
  client
    .callTool(
      { name: "call_tool", arguments: { name: `${server}__held_call`, arguments: { ms, tag } } },
      CallToolResultSchema,
      { timeout: 120_000, ...(signal ? { signal } : {}) },
    )
    .then((result) => CallToolResultSchema.parse(result));

async function record(client: Client, server: string) {
  const result = await client.callTool({
    name: "call_tool",
    arguments: { name: `${server}__call_record`, arguments: {} },
  });
  return JSON.parse(textOf(result)) as { maxInFlight: number; arrivals: { tag: string; at: number }[] };
}

async function toolsStat(client: Client) {
  const result = await client.callTool({ name: "tools_stat", arguments: {} });
  return (result as { structuredContent: Record<string, unknown> }).structuredContent as {
    totals: { calls: number; limited: number };
    limited: { server: string; tool: string; limited: number; calls: number }[];
    limits?: { server: string; inFlight: number; queued: number; rejected: Record<string, number> }[];
  };
}

const limitOf = (result: { _meta?: Record<string, unknown> }) =>
  result._meta?.["mcpproxy/limit"] as {
    server: string;
    limit: string;
    retryAfterMs: number;
    retryAt: string;
  };

describe("maxConcurrent", () => {
  test("200 concurrent calls to a server limited to 5: never more than 5 in flight, served in order, every call ends", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: {
        one: {
          ...fixtureEntry({ args: ["--call-record"] }),
          maxConcurrent: 5,
          queueSize: 200,
          queueTimeoutMs: 60_000,
        },
      },
    });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    // Connected and indexed first.
    await record(proxy.client, "one");
    const calls = Array.from({ length: 200 }, (_, i) => held(proxy.client, "one", 15, String(i)));
    // While they run, the proxy shows its queue.
    const during = await eventually(
      async () => (await toolsStat(proxy.client)).limits?.[0],
      (limits) => (limits?.queued ?? 0) > 0,
      20_000,
    );
    expect(during).toMatchObject({ server: "one", maxConcurrent: 5 });
    expect(during!.inFlight).toBeLessThanOrEqual(5);
    const results = await Promise.all(calls);
    expect(results.filter((result) => result.isError)).toEqual([]);
    const seen = await record(proxy.client, "one");
    expect(seen.maxInFlight).toBe(5);
    // First come, first served: the server saw the calls in the order the client sent them (one stdio pipe).
    expect(seen.arrivals.map((arrival) => Number(arrival.tag))).toEqual(
      Array.from({ length: 200 }, (_, i) => i),
    );
    const after = (await toolsStat(proxy.client)).limits?.[0];
    expect(after).toMatchObject({ inFlight: 0, queued: 0, rejected: { rate: 0, concurrency: 0, queue: 0 } });
  });

  test("a full queue refuses at once with the limit and when to retry; a cancelled queued call never reaches the server", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: {
        one: { ...fixtureEntry({ args: ["--call-record"] }), maxConcurrent: 1, queueSize: 2 },
      },
      mcpproxy: { metrics: true },
    });
    const proxy = await startHttpProxy(sandbox);
    scope.defer(() => proxy.stop());
    const client = await connectHttp(proxy.url);
    scope.defer(() => client.close());
    await record(client, "one");
    const first = held(client, "one", 1_500, "first");
    const limitsNow = async () => (await toolsStat(client)).limits?.[0];
    expect((await eventually(limitsNow, (limits) => limits?.inFlight === 1, 10_000))?.inFlight).toBe(1);
    const controller = new AbortController();
    const cancelled = held(client, "one", 10, "cancelled", controller.signal);
    const second = held(client, "one", 10, "second");
    expect((await eventually(limitsNow, (limits) => limits?.queued === 2, 10_000))?.queued).toBe(2);
    // The queue holds 2: the next call is refused at once, not left waiting.
    const refused = await held(client, "one", 10, "refused");
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("its queue holds 2");
    expect(textOf(refused)).toContain("try again in");
    expect(limitOf(refused)).toMatchObject({ server: "one", limit: "queue" });
    expect(limitOf(refused).retryAfterMs).toBeGreaterThan(0);
    expect(Date.parse(limitOf(refused).retryAt)).toBeGreaterThan(Date.now() - 60_000);

    controller.abort("the user pressed stop");
    await expect(cancelled).rejects.toThrow();
    expect((await eventually(limitsNow, (limits) => limits?.queued === 1, 10_000))?.queued).toBe(1);
    expect((await first).isError).toBeFalsy();
    expect((await second).isError).toBeFalsy();
    const tags = (await record(client, "one")).arrivals.map((arrival) => arrival.tag);
    expect(tags).toEqual(["first", "second"]);

    // Shown everywhere a person looks.
    const health = (await (await fetch(new URL("/health", proxy.url))).json()) as {
      servers: { name: string; limits?: Record<string, unknown> }[];
    };
    expect(health.servers[0]?.limits).toMatchObject({
      maxConcurrent: 1,
      queueSize: 2,
      inFlight: 0,
      queued: 0,
      rejected: { queue: 1 },
    });
    const listed = await client.callTool({ name: "upstream_servers", arguments: { operation: "list" } });
    const rows = (JSON.parse(textOf(listed)) as { servers: { limits?: Record<string, unknown> }[] }).servers;
    expect(rows[0]?.limits).toMatchObject({ maxConcurrent: 1, rejected: { queue: 1 } });
    const metrics = await (await fetch(new URL("/metrics", proxy.url))).text();
    expect(metrics).toContain('mcpproxy_upstream_calls_rejected_total{server="one",limit="queue"} 1');
    expect(metrics).toContain('mcpproxy_upstream_calls_in_flight{server="one"} 0');
    expect(metrics).toContain('mcpproxy_upstream_calls_queued{server="one"} 0');
    // A refused call is not a call the server failed: it is counted apart.
    expect(metrics).not.toContain('kind="limited"');
    const stats = await toolsStat(client);
    expect(stats.totals.limited).toBe(1);
    expect(stats.limited).toEqual([
      { server: "one", tool: "held_call", limited: 1, calls: expect.any(Number) },
    ]);
    await client.close();
    await proxy.stop();
    const cli = await runCli(["stats", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir], {});
    expect(cli.stdout).toContain("1 more were refused by a server's call limits");
    expect(cli.stdout).toContain("one/held_call: 1 refused");
  });
});

describe("rateLimit", () => {
  // Checked by counts and by the order of arrivals, never by how long the run took: a slow machine
  // only spaces the calls further apart, which every assertion below allows.
  test("a burst goes at once and the rest wait for their tokens: the server never gets more than the burst plus one a second", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: {
        api: {
          ...fixtureEntry({ args: ["--call-record"] }),
          rateLimit: { perMinute: 60, burst: 3 },
          queueTimeoutMs: 120_000,
        },
      },
    });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    // 7 calls at once against a full bucket of 3: 3 go now, 4 wait in the queue (about 4 s) and go.
    const results = await Promise.all(
      Array.from({ length: 7 }, (_, i) => held(proxy.client, "api", 1, String(i))),
    );
    expect(results.filter((result) => result.isError)).toEqual([]);
    const arrivals = (await record(proxy.client, "api")).arrivals.filter((arrival) => arrival.tag !== "");
    expect(arrivals.length).toBe(7);
    const start = arrivals[0]!.at;
    // However slow the machine, call i+1 arrives no sooner than its token: the burst, then one a second
    // (150 ms of slack for the two clocks).
    arrivals.forEach((arrival, i) => {
      const allowed = 3 + Math.floor((arrival.at - start + 150) / 1_000);
      expect(i + 1).toBeLessThanOrEqual(allowed);
    });
    expect((await toolsStat(proxy.client)).limits?.[0]?.rejected.rate ?? 0).toBe(0);
  });

  test("a call whose token would come after queueTimeoutMs is refused at once, with the limit and when to retry", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: {
        // One token every ten minutes: nothing refills while the test runs, however slow the machine.
        api: {
          ...fixtureEntry({ args: ["--call-record"] }),
          rateLimit: "6/hour burst 2",
          queueTimeoutMs: 2_500,
        },
      },
    });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => held(proxy.client, "api", 1, String(i))),
    );
    const admitted = results.filter((result) => !result.isError);
    const refused = results.filter((result) => result.isError);
    expect(admitted.length).toBe(2);
    expect(refused.length).toBe(3);
    for (const result of refused) {
      expect(limitOf(result)).toMatchObject({ server: "api", limit: "rate" });
      expect(limitOf(result).retryAfterMs).toBeGreaterThan(2_500);
      expect(textOf(result)).toContain("0.1 calls a minute (burst 2)");
    }
    const stats = await toolsStat(proxy.client);
    expect(stats.limits?.[0]?.rejected.rate).toBe(3);
  });
});

describe("an agent cannot lift the limits", () => {
  test("upstream_servers refuses the limit keys, and an agent's edit keeps the person's limits", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: { api: { ...fixtureEntry({ args: ["--call-record"] }), maxConcurrent: 1 } },
    });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    const raise = await proxy.client.callTool({
      name: "upstream_servers",
      arguments: { operation: "update", name: "api", server: { maxConcurrent: 1000, rateLimit: false } },
    });
    expect(raise.isError).toBe(true);
    expect(textOf(raise)).toContain("maxConcurrent");
    const saved = JSON.parse(readFileSync(sandbox.configPath, "utf8"));
    expect(saved.mcpServers.api.maxConcurrent).toBe(1);
    expect(saved.mcpServers.api.rateLimit).toBeUndefined();
  });
});

describe("changing the limits", () => {
  test("new limits in the config file apply while the server runs, without restarting it", async () => {
    const sandbox = scope.sandbox();
    const entry = fixtureEntry({ args: ["--call-record"] });
    sandbox.writeConfig({ mcpServers: { one: { ...entry, maxConcurrent: 1 } } });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    await held(proxy.client, "one", 1, "before");
    sandbox.writeConfig({ mcpServers: { one: { ...entry, maxConcurrent: 3, rateLimit: "600/min" } } });
    const limits = await eventually(
      async () => (await toolsStat(proxy.client)).limits?.[0] as Record<string, unknown> | undefined,
      (now) => now?.maxConcurrent === 3,
      15_000,
    );
    expect(limits).toMatchObject({ maxConcurrent: 3, rateLimit: { perMinute: 600, burst: 10 } });
    // The same server process: it still remembers the call made before the change.
    expect((await record(proxy.client, "one")).arrivals.map((arrival) => arrival.tag)).toEqual(["before"]);
  });
});
