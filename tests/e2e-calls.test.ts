import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { cleanupAfterEach, connectStdio, fixtureEntry, startHttpProxy } from "./helpers.ts";

setDefaultTimeout(60_000);

/** Timeouts, cancellation and progress of forwarded calls, through the compiled binary. */

const scope = cleanupAfterEach();

type ProxyClient = Awaited<ReturnType<typeof connectStdio>>["client"];
const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content ?? []).map((block) => block.text ?? "").join("");
const call = (client: ProxyClient | Client, name: string, args: object, options = {}) =>
  client.callTool({ name: "call_tool", arguments: { name, arguments: args } }, undefined, options);

async function proxyWith(servers: Record<string, unknown>, env: Record<string, string> = {}) {
  const sandbox = scope.sandbox();
  sandbox.writeConfig({ mcpServers: servers });
  const proxy = await connectStdio(sandbox, env);
  scope.defer(() => proxy.close());
  return proxy;
}

describe("timeouts", () => {
  test("a hung call ends after the server's callTimeoutMs, the server is told to cancel it, and the connection goes on", async () => {
    const proxy = await proxyWith({ slow: { ...fixtureEntry(), callTimeoutMs: 500 } });
    const hung = await call(proxy.client, "slow__sleep_then_answer", { ms: 30_000 });
    expect(hung.isError).toBe(true);
    expect(textOf(hung)).toBe(
      "sleep_then_answer on slow gave no answer or progress for 500 ms (callTimeoutMs); it was cancelled on the server. Try again, or give the server more time.",
    );
    const cancelled = JSON.parse(textOf(await call(proxy.client, "slow__cancelled_calls", {})));
    expect(cancelled).toEqual([expect.stringMatching(/^sleep_then_answer:\d+$/)]);
    expect(textOf(await call(proxy.client, "slow__echo", { message: "still usable" }))).toBe(
      "fixture echo: still usable",
    );
  });

  test("progress keeps a call alive past callTimeoutMs, and reaches the client under its own token", async () => {
    const proxy = await proxyWith({ busy: { ...fixtureEntry(), callTimeoutMs: 400 } });
    const seen: Progress[] = [];
    const result = await call(
      proxy.client,
      "busy__count_with_progress",
      { steps: 8, interval_ms: 150 },
      { onprogress: (progress: Progress) => seen.push(progress) },
    );
    expect(textOf(result)).toBe("counted to 8");
    // The SDK client drops a progress notice that arrives in the same read as its result (it
    // handles notices a microtask late), so the last one may be missing; the rest come in order.
    expect(seen.length).toBeGreaterThanOrEqual(7);
    expect(seen.map((p) => [p.progress, p.total, p.message])).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8].slice(0, seen.length).map((step) => [step, 8, `fixture step ${step}`]),
    );
  });

  test("maxCallMs ends a call that keeps sending progress, and the server is told to cancel it", async () => {
    const proxy = await proxyWith({ chatty: fixtureEntry() }, { MCPPROXY_MAX_CALL_MS: "600" });
    const result = await call(proxy.client, "chatty__count_with_progress", { steps: 50, interval_ms: 100 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("ran longer than 600 ms in all (maxCallMs)");
    expect(JSON.parse(textOf(await call(proxy.client, "chatty__cancelled_calls", {})))).toHaveLength(1);
  });

  test("a client that cancels its call has the upstream call cancelled too", async () => {
    const proxy = await proxyWith({ fx: fixtureEntry() });
    // Indexed and connected first: a call cancelled while it waits for the first index never reaches the server.
    await call(proxy.client, "fx__echo", { message: "ready" });
    const controller = new AbortController();
    const pending = call(
      proxy.client,
      "fx__sleep_then_answer",
      { ms: 30_000 },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort("the user pressed stop"), 300);
    await expect(pending).rejects.toThrow();
    let cancelled: string[] = [];
    for (let i = 0; i < 50 && cancelled.length === 0; i++) {
      cancelled = JSON.parse(textOf(await call(proxy.client, "fx__cancelled_calls", {})));
      await Bun.sleep(50);
    }
    expect(cancelled).toEqual([expect.stringMatching(/^sleep_then_answer:\d+$/)]);
  });

  test("a slow server does not hold up calls to another", async () => {
    const proxy = await proxyWith({ slow: fixtureEntry(), quick: fixtureEntry() });
    const finished: string[] = [];
    const slow = call(proxy.client, "slow__sleep_then_answer", { ms: 3_000 }).then(() =>
      finished.push("slow"),
    );
    await Bun.sleep(100);
    await call(proxy.client, "quick__echo", { message: "now" }).then(() => finished.push("quick"));
    await slow;
    expect(finished).toEqual(["quick", "slow"]);
  });
});

describe("two HTTP sessions", () => {
  test("using the same request ids and progress tokens never see each other's progress or results", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry() } });
    const proxy = await startHttpProxy(sandbox);
    scope.defer(() => proxy.stop());
    const clients = await Promise.all(
      [0, 1].map(async () => {
        const client = new Client({ name: "twin", version: "1" });
        await client.connect(new StreamableHTTPClientTransport(proxy.url));
        scope.defer(() => client.close());
        return client;
      }),
    );
    // Fresh SDK clients number their requests alike, and progress tokens are the request ids.
    const outcomes = await Promise.all(
      clients.map(async (client, i) => {
        const seen: Progress[] = [];
        const result = await call(
          client,
          "fx__count_with_progress",
          { steps: 3 + i * 3, interval_ms: 60 },
          { onprogress: (progress: Progress) => seen.push(progress) },
        );
        return {
          text: textOf(result),
          totals: [...new Set(seen.map((p) => p.total))],
          inOrder: seen.every((p, at) => p.progress === at + 1),
          mostly: seen.length >= 2 + i * 3, // the last notice may race its result in the SDK client
        };
      }),
    );
    expect(outcomes).toEqual([
      { text: "counted to 3", totals: [3], inOrder: true, mostly: true },
      { text: "counted to 6", totals: [6], inOrder: true, mostly: true },
    ]);
  });
});

describe("many calls at once", () => {
  test("200 concurrent calls over 3 upstreams each get their own answer", async () => {
    const servers = ["a", "b", "c"];
    const proxy = await proxyWith(
      Object.fromEntries(servers.map((name) => [name, fixtureEntry({ args: ["--name", name] })])),
    );
    const answers = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const server = servers[i % 3]!;
        const nonce = crypto.randomUUID();
        const result = await call(proxy.client, `${server}__echo`, { message: nonce });
        return textOf(result) === `${server} echo: ${nonce}`;
      }),
    );
    expect(answers.filter(Boolean)).toHaveLength(200);
  });
});
