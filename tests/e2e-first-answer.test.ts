import { describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  cleanupAfterEach,
  connectStdio,
  eventually,
  fixtureEntry,
  processesMatching,
  type Retrieved,
  retrieve,
} from "./helpers.ts";

/**
 * One slow server does not hold up retrieve_tools: the answer comes from the saved index and the
 * servers that are ready, and names the servers still connecting.
 */
setDefaultTimeout(90_000);
const cleanup = cleanupAfterEach();

type WithConnecting = Retrieved & { connecting?: { servers: string[]; hint: string } };

function config() {
  return {
    mcpServers: {
      fast: fixtureEntry(),
      // Answers nothing for 6 s: far longer than a first answer may wait once it has hits.
      slow: fixtureEntry({ args: ["--init-delay", "6000", "--name", "slowfx"], timeoutMs: 60_000 }),
    },
  };
}

describe("retrieve_tools while a server is slow to start", () => {
  test("on a first run it answers from the server that is ready and names the one still connecting", async () => {
    const sandbox = cleanup.sandbox();
    sandbox.writeConfig(config());
    const proxy = await connectStdio(sandbox);
    cleanup.defer(() => proxy.close());

    const first = (await retrieve(proxy.client, "echo back the message", 3)) as WithConnecting;
    expect(first.tools[0]?.name).toBe("fast__echo");
    expect(first.connecting?.servers).toEqual(["slow"]);
    expect(first.connecting?.hint).toContain("still starting");

    // Once it is up, its tools are found and it is no longer named.
    const later = (await eventually(
      () => retrieve(proxy.client, "echo back the message", 3),
      (result) => result.tools.some((tool) => tool.name === "slow__echo"),
      30_000,
    )) as WithConnecting;
    expect(later.tools.map((tool) => tool.name)).toContain("slow__echo");
    expect(later.connecting).toBeUndefined();
  });

  test("with a saved index it answers at once, the slow server's saved tools included, and names it", async () => {
    const sandbox = cleanup.sandbox();
    sandbox.writeConfig(config());
    const indexing = await connectStdio(sandbox);
    await eventually(
      () => retrieve(indexing.client, "echo back the message", 3),
      (result) => result.tools.some((tool) => tool.name === "slow__echo"),
      30_000,
    );
    await indexing.close();

    const proxy = await connectStdio(sandbox);
    cleanup.defer(() => proxy.close());
    const answer = (await retrieve(proxy.client, "echo back the message", 3)) as WithConnecting;
    expect(answer.tools.map((tool) => tool.name)).toContain("slow__echo");
    expect(answer.connecting?.servers).toContain("slow");
  });
});

describe("the first pass over the servers while the client asks", () => {
  test("with a saved index it keeps one server starting while requests come, and the rest once the client is quiet", async () => {
    const token = `priority-${crypto.randomUUID()}`;
    const sandbox = cleanup.sandbox();
    const names = ["a", "b", "c", "d", "e"];
    // A saved index first (a first run's searches wait for the pass: it keeps its full width).
    sandbox.writeConfig({ mcpServers: { fast: fixtureEntry() } });
    const indexing = await connectStdio(sandbox);
    await eventually(
      () => retrieve(indexing.client, "echo back the message", 3),
      (result) => result.tools.some((tool) => tool.name === "fast__echo"),
      30_000,
    );
    await indexing.close();
    sandbox.writeConfig({
      mcpServers: {
        fast: fixtureEntry(),
        // None answers its initialize within the test: each holds a place in the pass.
        ...Object.fromEntries(
          names.map((name) => [
            name,
            fixtureEntry({
              args: ["--init-delay", "60000", "--name", `${token}-${name}`],
              timeoutMs: 90_000,
            }),
          ]),
        ),
      },
    });
    const proxy = await connectStdio(sandbox);
    cleanup.defer(() => proxy.close());
    const asking = performance.now();
    while (performance.now() - asking < 2_000) {
      await proxy.client.ping();
      await Bun.sleep(50);
    }
    expect(processesMatching(token)).toHaveLength(1);
    // Quiet now: the pass goes on at full width.
    expect(
      await eventually(
        () => processesMatching(token),
        (pids) => pids.length === names.length,
        10_000,
      ),
    ).toHaveLength(names.length);
  });
});
