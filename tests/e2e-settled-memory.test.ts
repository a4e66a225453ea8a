import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { connectStdio, createSandbox, eventually, fixtureEntry, retrieve, type Sandbox } from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * Once the first indexing pass is over, serve hands back the memory start-up used
 * (app/settle-memory.ts): the code compiled so far is dropped and compiled again on its next run.
 * What runs after that (search, forwarding, argument checks, the proxy's own tools) still answers
 * as before.
 */
describe("serve after handing back start-up's memory", () => {
  let sandbox: Sandbox;
  let proxy: Awaited<ReturnType<typeof connectStdio>>;

  beforeAll(async () => {
    sandbox = createSandbox();
    sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() } });
    proxy = await connectStdio(sandbox, { MCPPROXY_LOG_LEVEL: "debug" });
    // The first request starts the upstreams and the first indexing pass.
    await retrieve(proxy.client, "echo a message back");
    const settled = await eventually(
      () => proxy.stderr(),
      (text) => /memory handed back/.test(text),
      45_000,
    );
    expect(settled).toMatch(/start-up over: memory handed back, RSS [\d.]+ -> [\d.]+ MiB/);
  });
  afterAll(async () => {
    await proxy?.close();
    sandbox?.cleanup();
  });

  test("it is done once", () => {
    expect(proxy.stderr().match(/memory handed back/g)?.length).toBe(1);
  });

  test("search, forwarded calls and argument checks answer as before", async () => {
    const found = await retrieve(proxy.client, "echo a message back");
    expect(found.tools.map((tool) => tool.name)).toContain("fixture__echo");
    for (const message of ["one", "two"]) {
      const echoed = await proxy.client.callTool({
        name: "call_tool",
        arguments: { name: "fixture__echo", arguments: { message } },
      });
      expect(echoed.content).toEqual([{ type: "text", text: `fixture echo: ${message}` }]);
    }
    const added = await proxy.client.callTool({
      name: "call_tool",
      arguments: { name: "fixture__add_numbers", arguments: { a: 2, b: 3 } },
    });
    expect(added.structuredContent).toEqual({ sum: 5 });
    const wrong = await proxy.client.callTool({
      name: "call_tool",
      arguments: { name: "fixture__add_numbers", arguments: { a: "two", b: 3 } },
    });
    expect(wrong.isError).toBe(true);
    const servers = await proxy.client.callTool({
      name: "upstream_servers",
      arguments: { operation: "list" },
    });
    expect(JSON.stringify(servers.content)).toContain("fixture");
  });
});
