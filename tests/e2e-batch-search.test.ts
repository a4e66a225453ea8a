import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdioTransport } from "@modelcontextprotocol/client/stdio";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  cleanupAfterEach,
  connectHttp,
  connectStdio,
  eventually,
  fixtureEntry,
  type Retrieved,
  ROOT,
  requireBinary,
  retrieve,
  runCli,
  type Sandbox,
  startHttpProxy,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * Issue 24 part 3 through the compiled binary with real clients: `retrieve_tools` with `queries`
 * (one ranked list per request in one call) and the adaptive cut after the best hits.
 */
const scope = cleanupAfterEach();

interface Batch {
  results: (Retrieved & { notes?: string[] })[];
  notes?: string[];
  registered?: string[];
}

const PLAN = ["return a tiny red picture", "echo back the message it is given", "add two numbers"];

async function batch(client: Client, args: Record<string, unknown>): Promise<Batch> {
  const result = await client.callTool({ name: "retrieve_tools", arguments: args });
  if (result.isError) throw new Error(`retrieve_tools failed: ${JSON.stringify(result.content)}`);
  // The text is the same JSON as the structured content, for clients that read only text.
  expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual(result.structuredContent);
  return result.structuredContent as unknown as Batch;
}

async function refusal(client: Client, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name: "retrieve_tools", arguments: args });
  expect(result.isError).toBe(true);
  return (result.content as { text: string }[])[0]!.text;
}

function proxyWithFixture(servers: Record<string, unknown> = { fx: fixtureEntry() }, mcpproxy = {}) {
  const sandbox = scope.sandbox();
  sandbox.writeConfig({ mcpServers: servers, mcpproxy });
  return sandbox;
}

async function stdioProxy(sandbox: Sandbox, env: Record<string, string> = {}) {
  const proxy = await connectStdio(sandbox, env);
  scope.defer(() => proxy.close());
  return proxy.client;
}

const names = (list: Retrieved) => list.tools.map((tool) => tool.name);

describe("retrieve_tools with queries", () => {
  test("over stdio: one list per request in the order asked, each as that request alone gets it", async () => {
    const client = await stdioProxy(proxyWithFixture(), { MCPPROXY_TOP_K: "3" });
    const singles = [];
    for (const query of PLAN) singles.push(await retrieve(client, query));
    const answer = await batch(client, { queries: PLAN });
    expect(answer.results).toEqual(singles);
    expect(answer.results.map((list) => list.query)).toEqual(PLAN);
    expect(answer.results.map((list) => list.tools[0]?.name)).toEqual([
      "fx__tiny_picture",
      "fx__echo",
      "fx__add_numbers",
    ]);
    // Reversed, the lists follow: order is per request, not by score.
    const reversed = await batch(client, { queries: [...PLAN].reverse() });
    expect(reversed.results).toEqual([...singles].reverse());
    // One request keeps the answer of SPEC §5: its list at the top level, no `results`.
    const single = (await client.callTool({ name: "retrieve_tools", arguments: { query: PLAN[1]! } }))
      .structuredContent as Record<string, unknown>;
    expect(Object.keys(single).sort()).toEqual(["query", "tools"]);
    // top_k concerns the whole call: clamped once, said once beside the lists; each list has up to 3.
    const clamped = await batch(client, { queries: [PLAN[0]!, PLAN[0]!], top_k: 10 });
    expect(clamped.notes).toEqual([
      "top_k 10 is over this proxy's limit of 3 (MCPPROXY_TOP_K): up to 3 returned.",
    ]);
    expect(clamped.results.map((list) => list.notes)).toEqual([undefined, undefined]);
    expect(clamped.results[0]).toEqual(clamped.results[1]!);
    expect(clamped.results[0]!.tools.length).toBeLessThanOrEqual(3);
    // A request that matches nothing gets its own empty list and hint, beside the others' hits.
    const mixed = await batch(client, { queries: ["zzyzx qwfp vbnm", PLAN[1]!] });
    expect(mixed.results[0]).toMatchObject({ query: "zzyzx qwfp vbnm", tools: [] });
    expect(mixed.results[0]!.hint).toContain("No tool matched");
    expect(names(mixed.results[1]!)[0]).toBe("fx__echo");
  });

  test("bad requests get a clear error and the session goes on", async () => {
    const client = await stdioProxy(proxyWithFixture());
    const cases: [Record<string, unknown>, string][] = [
      [{ queries: [] }, "queries must not be empty: give at least one request"],
      [
        { queries: Array.from({ length: 11 }, (_, i) => `request ${i}`) },
        "queries may hold at most 10 requests: ask for the rest in another call",
      ],
      [{ query: "echo", queries: ["add"] }, "give query (one request) or queries (several), not both"],
      [{ queries: ["echo", 3, null] }, "queries[1] must be a string; queries[2] must be a string"],
      [{ queries: ["echo", "   "] }, "queries[1] must not be empty"],
      [{ queries: "echo" }, "queries must be a list of strings"],
      [{}, "query is required (or queries, a list of requests)"],
      [{ queries: ["echo"], adaptive: "yes" }, "adaptive must be true or false"],
    ];
    for (const [args, message] of cases) {
      expect(await refusal(client, args)).toBe(`Invalid arguments for retrieve_tools: ${message}.`);
    }
    expect(names((await batch(client, { queries: Array(10).fill(PLAN[1]) })).results[9]!)[0]).toBe(
      "fx__echo",
    );
    // The most an agent can ask in one call: ten requests of 50,033 characters, each searched on
    // its first 4,096 and said so in its own list.
    const huge = await batch(client, { queries: Array(10).fill(`${PLAN[1]} ${"word ".repeat(10_000)}`) });
    expect(huge.results).toHaveLength(10);
    for (const list of huge.results) {
      expect(list.notes?.[0]).toStartWith(
        "The query is 50033 characters long; only its first 4096 were searched.",
      );
      expect(list.query.length).toBeLessThanOrEqual(4096);
      expect(list.query).toStartWith(PLAN[1]!);
    }
  });

  test("over HTTP, the plugins' rankers apply to each list", async () => {
    const sandbox = proxyWithFixture(
      { alpha: fixtureEntry(), beta: fixtureEntry() },
      {
        plugins: [
          { path: join(ROOT, "plugins", "boost-server.ts"), options: { server: "beta", boost: 1.5 } },
        ],
      },
    );
    const proxy = await startHttpProxy(sandbox);
    scope.defer(() => proxy.stop());
    const client = await connectHttp(proxy.url);
    scope.defer(() => client.close());
    const answer = await eventually(
      () => batch(client, { queries: [PLAN[1]!, PLAN[2]!], top_k: 2 }),
      (found) => found.results.every((list) => list.tools.length === 2),
      10_000,
    );
    // Both servers have the same tools at equal scores; without the ranker alpha's would come first.
    expect(answer.results.map(names)).toEqual([
      ["beta__echo", "alpha__echo"],
      ["beta__add_numbers", "alpha__add_numbers"],
    ]);
  });

  test("the learned prior applies to each list", async () => {
    const sandbox = proxyWithFixture(
      { fx: fixtureEntry(), backup: fixtureEntry({ args: ["--name", "backup"] }) },
      { learnedPrior: true },
    );
    const client = await stdioProxy(sandbox);
    const failing = "a tool that reports failure with isError";
    const before = await batch(client, { queries: [PLAN[1]!, failing] });
    const top = before.results[1]!.tools[0]!.name;
    expect(top).toEndWith("__always_fails");
    for (let i = 0; i < 5; i++) await client.callTool({ name: "call_tool", arguments: { name: top } });
    await Bun.sleep(1100); // the prior reads the figures at most once a second
    const after = await batch(client, { queries: [PLAN[1]!, failing] });
    expect(after.results[1]!.tools[0]!.name).not.toBe(top);
    expect(after.results[1]!.tools[0]!.name).toEndWith("__always_fails");
    expect(names(after.results[0]!)[0]).toEndWith("__echo");
  });

  test("dynamic routing registers the best tools of every list, announced once", async () => {
    const client = await stdioProxy(proxyWithFixture(), {
      MCPPROXY_ROUTING_TYPE: "dynamic",
      MCPPROXY_TOOLS_LIMIT: "3",
    });
    let notifications = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      notifications++;
    });
    // Three lists of three: nine tools for a pool of three. Each request keeps its best one.
    const answer = await batch(client, { queries: PLAN, top_k: 3 });
    const bests = answer.results.map((list) => list.tools[0]!.name);
    expect(answer.registered?.sort()).toEqual([...bests].sort());
    await eventually(
      () => notifications,
      (n) => n === 1,
      10_000,
    );
    const listed = (await client.listTools()).tools.map((tool) => tool.name);
    for (const name of bests) expect(listed).toContain(name);
    const picture = await client.callTool({ name: "fx__add_numbers", arguments: { a: 2, b: 3 } });
    expect(picture.isError).toBeFalsy();
    await Bun.sleep(300);
    expect(notifications).toBe(1);
  });

  test("dynamic routing: a request that matches weakly keeps its best tool in a small pool", async () => {
    const client = await stdioProxy(proxyWithFixture(), {
      MCPPROXY_ROUTING_TYPE: "dynamic",
      MCPPROXY_TOOLS_LIMIT: "2",
    });
    const answer = await batch(client, { queries: ["content", "a new description"], top_k: 3 });
    const [strong, weak] = answer.results;
    // The strong list's second tool outscores the weak list's best: by score alone it would take
    // the second place in the pool, and the weak request would have no tool.
    expect(strong!.tools[1]!.score).toBeGreaterThan(weak!.tools[0]!.score);
    expect(answer.registered?.sort()).toEqual([strong!.tools[0]!.name, weak!.tools[0]!.name].sort());
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain(weak!.tools[0]!.name);
  });

  test("auto routing: a client that re-lists after a batch gets every list's tools", async () => {
    const client = await stdioProxy(proxyWithFixture(), { MCPPROXY_ROUTING_TYPE: "auto" });
    const lists: string[][] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      lists.push((await client.listTools()).tools.map((tool) => tool.name));
    });
    const answer = await batch(client, { queries: PLAN, top_k: 1 });
    await eventually(
      () => lists.length,
      (n) => n === 1,
      10_000,
    );
    for (const list of answer.results) expect(lists[0]).toContain(list.tools[0]!.name);
  });

  test("a 2026-07-28 client gets the batch in the same shape", async () => {
    const sandbox = proxyWithFixture();
    const client = new ModernClient(
      { name: "modern", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(
      new ModernStdioTransport({
        command: requireBinary(),
        args: ["serve", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
        env: sandbox.env(),
        stderr: "ignore",
      }),
    );
    scope.defer(() => client.close());
    const result = await eventually(
      () => client.callTool({ name: "retrieve_tools", arguments: { queries: PLAN.slice(0, 2) } }),
      (found) =>
        ((found.structuredContent as unknown as Batch | undefined)?.results ?? []).every(
          (list) => list.tools.length > 0,
        ),
      10_000,
    );
    const answer = result.structuredContent as unknown as Batch;
    expect(answer.results.map((list) => list.tools[0]?.name)).toEqual(["fx__tiny_picture", "fx__echo"]);
  });

  test("mcpproxy search --each prints one list per request, as retrieve_tools does", async () => {
    const sandbox = proxyWithFixture();
    const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    expect((await runCli(["index", ...flags], sandbox.env())).code).toBe(0);
    const json = await runCli(["search", "--each", "--json", ...PLAN, ...flags], sandbox.env());
    expect(json.code).toBe(0);
    const answer = JSON.parse(json.stdout) as Batch;
    expect(answer.results.map((list) => list.query)).toEqual(PLAN);
    expect(answer.results.map((list) => list.tools[0]?.name)).toEqual([
      "fx__tiny_picture",
      "fx__echo",
      "fx__add_numbers",
    ]);
    // Without --each the words are one request, as before.
    const one = JSON.parse(
      (await runCli(["search", "--json", "add", "two", "numbers", ...flags], sandbox.env())).stdout,
    );
    expect(one.query).toBe("add two numbers");
    const text = await runCli(["search", "--each", ...PLAN.slice(0, 2), ...flags], sandbox.env());
    expect(text.stdout).toMatch(/^== return a tiny red picture\n1\. fx__tiny_picture/);
    expect(text.stdout).toContain("\n\n== echo back the message it is given\n1. fx__echo");
  });
});

describe("adaptive top-k", () => {
  const PRECISE = "add up two numbers";

  test("a precise request gets fewer schemas with it on, and a call can turn it either way", async () => {
    const off = await stdioProxy(proxyWithFixture());
    const full = await retrieve(off, PRECISE);
    expect(full.tools.length).toBeGreaterThan(1);
    expect(full.tools[0]!.name).toBe("fx__add_numbers");
    const asked = await batch(off, { query: PRECISE, adaptive: true });
    expect(names(asked as unknown as Retrieved)).toEqual(["fx__add_numbers"]);

    const on = await stdioProxy(proxyWithFixture(), { MCPPROXY_ADAPTIVE_TOP_K: "true" });
    const cut = (await on.callTool({ name: "retrieve_tools", arguments: { query: PRECISE } }))
      .structuredContent as unknown as Retrieved & { notes?: string[] };
    expect(names(cut)).toEqual(["fx__add_numbers"]);
    expect(cut.notes?.[0]).toMatch(/^\d+ weaker match(es)? left out: scored under 75% of the best/);
    expect(cut.tools[0]).toEqual(full.tools[0]!);
    const uncut = await batch(on, { query: PRECISE, adaptive: false });
    expect(names(uncut as unknown as Retrieved)).toEqual(names(full));
    // In a batch each list is cut on its own scores; a request of several steps is never cut.
    const steps = "Return a tiny red picture. Then echo back the message it is given.";
    const both = await batch(on, { queries: [PRECISE, steps] });
    expect(names(both.results[0]!)).toEqual(["fx__add_numbers"]);
    expect(both.results[1]!.tools.length).toBe((await retrieve(off, steps)).tools.length);
  });

  test("the setting is checked like every other, in the file and the environment", async () => {
    const sandbox = proxyWithFixture({}, { adaptiveTopk: true });
    const run = await runCli(["search", "x", "--config", sandbox.configPath], sandbox.env());
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("mcpproxy.adaptiveTopk: unknown key (did you mean `adaptiveTopK`?)");
    const other = proxyWithFixture();
    const bad = await runCli(
      ["search", "x", "--config", other.configPath],
      other.env({ MCPPROXY_ADAPTIVE_TOP_K: "maybe" }),
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("MCPPROXY_ADAPTIVE_TOP_K: must be true or false");
  });

  test("mcpproxy search --adaptive cuts as retrieve_tools does", async () => {
    const sandbox = proxyWithFixture();
    const flags = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
    expect((await runCli(["index", ...flags], sandbox.env())).code).toBe(0);
    const full = JSON.parse((await runCli(["search", "--json", PRECISE, ...flags], sandbox.env())).stdout);
    const cut = JSON.parse(
      (await runCli(["search", "--json", "--adaptive", PRECISE, ...flags], sandbox.env())).stdout,
    );
    expect(full.tools.length).toBeGreaterThan(1);
    expect(cut.tools.map((tool: { name: string }) => tool.name)).toEqual(["fx__add_numbers"]);
  });
});
