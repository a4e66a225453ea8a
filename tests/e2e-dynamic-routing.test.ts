import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  cleanupAfterEach,
  connectStdio,
  eventually,
  fixtureEntry,
  OWN_TOOLS_SORTED,
  retrieve,
  type Sandbox,
  startHttpProxy,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/** Dynamic and auto routing through the compiled binary, with real SDK clients. */

const scope = cleanupAfterEach();
let sandbox: Sandbox;

/** Counts list_changed notifications; with `relist`, fetches tools/list after each, as a listening client does. */
function watchListChanged(client: Client, relist: boolean) {
  const seen = { notifications: 0, lists: [] as string[][] };
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    seen.notifications++;
    if (relist) seen.lists.push((await client.listTools()).tools.map((tool) => tool.name));
  });
  return seen;
}

const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();
const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content ?? []).map((block) => block.text ?? "").join("");

async function callDirect(client: Client, name: string, args: Record<string, unknown>) {
  return client.callTool({ name, arguments: args });
}

describe("dynamic routing", () => {
  test("over stdio: found tools are registered, announced once, listed with their definitions, and answer like call_tool", async () => {
    sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() } });
    const proxy = await connectStdio(sandbox, { MCPPROXY_ROUTING_TYPE: "DYNAMIC" });
    scope.defer(() => proxy.close());
    expect(proxy.client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    const seen = watchListChanged(proxy.client, true);
    expect(await names(proxy.client)).toEqual(OWN_TOOLS_SORTED);

    const found = await retrieve(proxy.client, "echo back the message it is given", 2);
    const registered = (found as unknown as { registered: string[] }).registered;
    expect(registered).toContain("fixture__echo");
    await eventually(
      () => seen.lists.length,
      (n) => n === 1,
      10_000,
    );
    expect(seen.notifications).toBe(1);
    expect(seen.lists[0]?.sort()).toEqual([...OWN_TOOLS_SORTED, ...registered].sort());
    const echo = (await proxy.client.listTools()).tools.find((tool) => tool.name === "fixture__echo");
    expect(echo).toMatchObject({
      title: "Echo a message",
      description: "Echo back the message it is given",
      annotations: { readOnlyHint: true },
      inputSchema: { required: ["message"] },
    });

    const direct = await callDirect(proxy.client, "fixture__echo", { message: "hi" });
    const viaCallTool = await proxy.client.callTool({
      name: "call_tool",
      arguments: { name: "fixture__echo", arguments: { message: "hi" } },
    });
    expect(direct).toEqual(viaCallTool);
    const failing = await callDirect(proxy.client, "fixture__add_numbers", { a: "x", b: 1 });
    expect(failing).toEqual(
      await proxy.client.callTool({
        name: "call_tool",
        arguments: { name: "fixture__add_numbers", arguments: { a: "x", b: 1 } },
      }),
    );

    // The same search again registers nothing new and sends nothing.
    await retrieve(proxy.client, "echo back the message it is given", 2);
    await Bun.sleep(300);
    expect(seen.notifications).toBe(1);
  });

  test("a session never holds more than MCPPROXY_TOOLS_LIMIT tools and evicts the weakest older one", async () => {
    sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() } });
    const proxy = await connectStdio(sandbox, {
      MCPPROXY_ROUTING_TYPE: "dynamic",
      MCPPROXY_TOOLS_LIMIT: "3",
    });
    scope.defer(() => proxy.close());
    const seen = watchListChanged(proxy.client, true);

    const first = await retrieve(proxy.client, "return a tiny red picture as PNG image content", 3);
    await eventually(
      () => seen.lists.length,
      (n) => n === 1,
      10_000,
    );
    expect(first.tools).toHaveLength(3);
    const [best, second, weakest] = first.tools;
    expect(best!.score).toBeGreaterThan(weakest!.score);
    const next = await retrieve(proxy.client, "echo back the message it is given", 1);
    expect(first.tools.map((tool) => tool.name)).not.toContain(next.tools[0]!.name);
    await eventually(
      () => seen.lists.length,
      (n) => n === 2,
      10_000,
    );
    // All three are seconds old, so their freshness is alike and the lowest score goes.
    expect(await names(proxy.client)).toEqual(
      [...OWN_TOOLS_SORTED, best!.name, second!.name, next.tools[0]!.name].sort(),
    );
  });

  test("over HTTP each session has its own pool, calls by name work, and an ended session frees its pool", async () => {
    sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() }, mcpproxy: { routing: "dynamic" } });
    const proxy = await startHttpProxy(sandbox);
    scope.defer(() => proxy.stop());
    const connect = async () => {
      const client = new Client({ name: "http-session", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(proxy.url));
      return client;
    };
    const one = await connect();
    const two = await connect();
    scope.defer(
      () => one.close(),
      () => two.close(),
    );
    const seenOne = watchListChanged(one, true);
    const seenTwo = watchListChanged(two, true);

    await retrieve(one, "echo back the message", 1);
    await retrieve(two, "add two numbers", 1);
    await eventually(
      () => seenOne.lists.length + seenTwo.lists.length,
      (n) => n === 2,
      10_000,
    );
    expect(await names(one)).toEqual([...OWN_TOOLS_SORTED, "fixture__echo"].sort());
    expect(await names(two)).toEqual([...OWN_TOOLS_SORTED, "fixture__add_numbers"].sort());
    expect(await callDirect(one, "fixture__echo", { message: "by name" })).toEqual(
      await one.callTool({
        name: "call_tool",
        arguments: { name: "fixture__echo", arguments: { message: "by name" } },
      }),
    );

    // A session that ends frees its registered tools.
    const dynamicSessions = async () =>
      ((await (await fetch(new URL("/health", proxy.url))).json()) as { sessions: { dynamic: number } })
        .sessions.dynamic;
    expect(await dynamicSessions()).toBe(2);
    await (one.transport as StreamableHTTPClientTransport).terminateSession();
    expect(await eventually(dynamicSessions, (n) => n === 1, 10_000)).toBe(1);
  });
});

describe("auto routing", () => {
  /**
   * Waits until `client`'s proxy has indexed the fixture and told its clients of the description
   * that follows (description-watch.ts): a proxy still starting may send one list_changed for that,
   * which is not auto routing's. Each client has its own proxy and data dir, so neither hears of the
   * other's start.
   */
  async function settled(client: Client) {
    const description = await eventually(
      async () =>
        (await client.listTools()).tools.find((tool) => tool.name === "retrieve_tools")?.description,
      (description) => description?.includes("fixture") === true,
      20_000,
    );
    expect(description).toContain("fixture");
    // Two looks of the description watch, so a change it saw is told before counting starts.
    await Bun.sleep(2_500);
  }

  test("a client that re-lists after list_changed is switched to dynamic; one that does not stays on call_tool", async () => {
    const config = { mcpServers: { fixture: fixtureEntry() }, mcpproxy: { routing: "auto" } };
    const boxes = [scope.sandbox(), scope.sandbox()] as const;
    for (const box of boxes) box.writeConfig(config);
    const listening = await connectStdio(boxes[0]);
    const deaf = await connectStdio(boxes[1]);
    scope.defer(
      () => listening.close(),
      () => deaf.close(),
    );
    const heardAll = watchListChanged(listening.client, true);
    const ignoredAll = watchListChanged(deaf.client, false);
    await Promise.all([settled(listening.client), settled(deaf.client)]);
    // What each client hears from here on.
    const start = {
      heard: heardAll.notifications,
      lists: heardAll.lists.length,
      ignored: ignoredAll.notifications,
    };
    const heard = {
      get notifications() {
        return heardAll.notifications - start.heard;
      },
      get lists() {
        return heardAll.lists.slice(start.lists);
      },
    };
    const ignored = {
      get notifications() {
        return ignoredAll.notifications - start.ignored;
      },
    };
    expect(await names(listening.client)).toEqual(OWN_TOOLS_SORTED);

    for (const [client, seen] of [
      [listening.client, heard],
      [deaf.client, ignored],
    ] as const) {
      await retrieve(client, "echo back the message", 1);
      await eventually(
        () => seen.notifications,
        (n) => n === 1,
        10_000,
      );
    }
    await eventually(
      () => heard.lists.length,
      (n) => n === 1,
      10_000,
    );
    expect(heard.lists[0]).toContain("fixture__echo");

    for (const client of [listening.client, deaf.client]) await retrieve(client, "add two numbers", 1);
    await eventually(
      () => heard.notifications,
      (n) => n === 2,
      10_000,
    );
    await Bun.sleep(300);
    expect(ignored.notifications).toBe(1);
    expect(await names(listening.client)).toEqual(
      [...OWN_TOOLS_SORTED, "fixture__add_numbers", "fixture__echo"].sort(),
    );
    expect(await names(deaf.client)).toEqual(OWN_TOOLS_SORTED);
    const third = await retrieve(deaf.client, "return a tiny picture", 1);
    expect(third).not.toHaveProperty("registered");
    await Bun.sleep(300);
    expect(ignored.notifications).toBe(1);
  });
});

describe("an upstream that changes its tools", () => {
  test("re-indexes it, updates or drops the registered tools, and tells the sessions", async () => {
    sandbox = scope.sandbox();
    // trust: auto, so a changed tool stays usable (under the default, it would be quarantined and dropped).
    sandbox.writeConfig({
      mcpServers: { fixture: { ...fixtureEntry(), trust: "auto" } },
      mcpproxy: { routing: "dynamic" },
    });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    const seen = watchListChanged(proxy.client, true);
    await retrieve(proxy.client, "echo back the message", 1);
    await retrieve(proxy.client, "tiny red picture", 1);
    await eventually(
      () => seen.lists.at(-1) ?? [],
      (list) => list.includes("fixture__tiny_picture"),
      10_000,
    );
    const before = seen.notifications;

    await proxy.client.callTool({
      name: "call_tool",
      arguments: {
        name: "fixture__rewrite_tool",
        arguments: { tool_name: "echo", description: "Say it again, louder" },
      },
    });
    await eventually(
      () => seen.notifications,
      (n) => n === before + 1,
      10_000,
    );
    const echo = await eventually(
      async () => (await proxy.client.listTools()).tools.find((tool) => tool.name === "fixture__echo"),
      (tool) => tool?.description === "Say it again, louder",
      10_000,
    );
    expect(echo?.description).toBe("Say it again, louder");

    await proxy.client.callTool({
      name: "call_tool",
      arguments: { name: "fixture__remove_tool", arguments: { tool_name: "tiny_picture" } },
    });
    await eventually(
      () => seen.notifications,
      (n) => n === before + 2,
      10_000,
    );
    expect(await names(proxy.client)).toEqual([...OWN_TOOLS_SORTED, "fixture__echo"].sort());
    const gone = await callDirect(proxy.client, "fixture__tiny_picture", {});
    expect(gone.isError).toBe(true);
    expect(textOf(gone)).toContain("No tool named fixture__tiny_picture");
  });
});

describe("call-tool routing", () => {
  test("lists only the built-in tools after a search (listChanged is for retrieve_tools' description)", async () => {
    sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fixture: fixtureEntry() } });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    // The list changes only when retrieve_tools' description does (e2e-search-description.test.ts).
    expect(proxy.client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    const found = await retrieve(proxy.client, "echo back the message", 2);
    expect(found).not.toHaveProperty("registered");
    expect(await names(proxy.client)).toEqual(OWN_TOOLS_SORTED);
  });
});
