import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client, type McpSubscription, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { MAX_STDIO_LISTENS } from "../src/server/transport/stdio-server.ts";
import {
  cleanupAfterEach,
  eventually,
  fixtureEntry,
  ROOT,
  requireBinary,
  runCli,
  type Sandbox,
  startHttpProxy,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * Issue 22: `subscriptions/listen` served to 2026-07-28 clients, over stdio and HTTP, through the
 * compiled binary. A listen stream is acknowledged with the subset the proxy honours (prompt and
 * resource list changes, and the resource URIs it can deliver updates of; never tools, whose
 * modern list is fixed); list changes reach it from upstreams, config edits, `upstream_servers`
 * and approvals; a resource update reaches only the streams (and legacy sessions) subscribed to
 * that federated URI, and the owning server is subscribed once while anyone wants the URI. A
 * server held for approval reaches no stream. The upstreams are tests/fixtures/capabilities-server.ts
 * (v1 SDK: 2025 servers).
 */
const scope = cleanupAfterEach();
const MODERN = "2026-07-28";
const CAPS = join(ROOT, "tests", "fixtures", "capabilities-server.ts");
const HOSTNAME = "file:///etc/hostname";
const NOTE = "notes://1";
const federated = (server: string, uri: string) => `mcpproxy://${server}/${uri}`;
type Kind = "stdio" | "http";

/** A capabilities server that takes subscriptions and logs them to `<dir>/<name>-subscribe.log`. */
function capsEntry(sandbox: Sandbox, name: string, extra: Record<string, unknown> = {}) {
  const { env, ...rest } = extra as { env?: Record<string, string> };
  return {
    command: process.execPath,
    args: [CAPS],
    env: { CAPS_SUBSCRIBE_LOG: join(sandbox.dir, `${name}-subscribe.log`), ...env },
    ...rest,
  };
}

const subscribeLog = (sandbox: Sandbox, name: string) => {
  const path = join(sandbox.dir, `${name}-subscribe.log`);
  return existsSync(path) ? readFileSync(path, "utf8").trim().split("\n").filter(Boolean) : [];
};

/** What one client heard on its listen streams. */
interface Heard {
  prompts: number;
  resources: number;
  updated: string[];
  /** Each update with the id of the stream it came on. */
  tagged: string[];
}

function newClient(name: string) {
  const heard: Heard = { prompts: 0, resources: 0, updated: [], tagged: [] };
  const client = new Client({ name, version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } });
  client.setNotificationHandler("notifications/prompts/list_changed", () => {
    heard.prompts++;
  });
  client.setNotificationHandler("notifications/resources/list_changed", () => {
    heard.resources++;
  });
  client.setNotificationHandler("notifications/resources/updated", (notification) => {
    heard.updated.push(notification.params.uri);
    heard.tagged.push(
      `${notification.params.uri} ${String(notification.params._meta?.["io.modelcontextprotocol/subscriptionId"])}`,
    );
  });
  return { client, heard };
}

/** The proxy over `kind`, and a way to open more pinned 2026-07-28 clients of it. */
async function startProxy(sandbox: Sandbox, kind: Kind) {
  if (kind === "http") {
    const proxy = await startHttpProxy(sandbox);
    scope.defer(() => proxy.stop());
    return {
      url: proxy.url,
      stop: () => proxy.stop(),
      async connect(name = "listener") {
        const made = newClient(name);
        await made.client.connect(new StreamableHTTPClientTransport(proxy.url));
        scope.defer(() => made.client.close());
        return made;
      },
    };
  }
  // Over stdio one proxy serves one client: every listener is a stream of that client.
  const made = newClient("stdio-listener");
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["serve", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
    env: sandbox.env(),
    stderr: "ignore",
  });
  await made.client.connect(transport);
  scope.defer(() => made.client.close());
  return {
    url: undefined,
    stop: async () => {
      if (transport.pid) process.kill(transport.pid, "SIGTERM");
    },
    connect: async () => made,
  };
}

const callTool = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name: "call_tool", arguments: { name, arguments: args } });

const textOf = (result: unknown) =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");

/** Waits until the federated resources list names `uri` (its server connected). */
async function untilListed(client: Client, uri: string) {
  const uris = await eventually(
    async () => (await client.listResources()).resources.map((resource) => resource.uri),
    (list) => list.includes(uri),
    15_000,
  );
  expect(uris).toContain(uri);
}

const listen = (client: Client, filter: Parameters<Client["listen"]>[0]): Promise<McpSubscription> =>
  client.listen(filter);

/** The id a listen notification was tagged with (the stream it came on). */
const streamOf = (tagged: string | undefined) => tagged?.split(" ")[1];

/** One look of the proxy's list watch (src/app/list-watch.ts) goes by, so what it saw at start is told. */
const settleListWatch = () => Bun.sleep(1_300);

for (const kind of ["stdio", "http"] as const) {
  describe(`subscriptions/listen over ${kind}`, () => {
    test("the acknowledgement names the honoured subset: only URIs the proxy can deliver", async () => {
      const sandbox = scope.sandbox();
      sandbox.writeConfig({ mcpServers: { caps: capsEntry(sandbox, "caps") } });
      const proxy = await startProxy(sandbox, kind);
      const { client } = await proxy.connect();
      await untilListed(client, federated("caps", HOSTNAME));
      const subscription = await listen(client, {
        toolsListChanged: true,
        promptsListChanged: true,
        resourcesListChanged: true,
        resourceSubscriptions: [
          federated("caps", HOSTNAME),
          HOSTNAME, // not one of this proxy's URIs
          federated("nosuch", HOSTNAME), // no such server
          federated("caps", HOSTNAME), // twice
        ],
      });
      // Tools too: retrieve_tools' description follows the servers (e2e-search-description.test.ts).
      expect(subscription.honoredFilter).toEqual({
        toolsListChanged: true,
        promptsListChanged: true,
        resourcesListChanged: true,
        resourceSubscriptions: [federated("caps", HOSTNAME)],
      });
      const discovered = client.getServerCapabilities();
      expect(discovered?.tools?.listChanged).toBe(true);
      expect(discovered?.resources).toMatchObject({ subscribe: true, listChanged: true });
      await subscription.close();
    });

    test("a resource update reaches only the streams subscribed to its URI, tagged with the stream", async () => {
      const sandbox = scope.sandbox();
      sandbox.writeConfig({ mcpServers: { caps: capsEntry(sandbox, "caps") } });
      const proxy = await startProxy(sandbox, kind);
      const first = await proxy.connect("first");
      const hostname = federated("caps", HOSTNAME);
      const note = federated("caps", NOTE);
      await untilListed(first.client, hostname);
      // Over HTTP a second client; over stdio a second stream of the one client.
      const second = kind === "http" ? await proxy.connect("second") : first;
      await listen(first.client, { resourceSubscriptions: [hostname] });
      await listen(second.client, { resourceSubscriptions: [note] });
      await eventually(
        () => subscribeLog(sandbox, "caps"),
        (log) => log.length >= 2,
        10_000,
      );
      expect(subscribeLog(sandbox, "caps").sort()).toEqual([`subscribe ${HOSTNAME}`, `subscribe ${NOTE}`]);

      // The server sends an update only for what it was subscribed to (touch_resource says so).
      for (const uri of [HOSTNAME, NOTE, HOSTNAME])
        expect(textOf(await callTool(first.client, "caps__touch_resource", { uri }))).toContain("touched");
      const tagged = await eventually(
        () => [...first.heard.tagged, ...(second === first ? [] : second.heard.tagged)],
        (seen) => seen.length >= 3,
        10_000,
      );
      if (kind === "http") {
        // Each client heard of its own resource only (an update not for it would have come first).
        expect(first.heard.updated).toEqual([hostname, hostname]);
        expect(second.heard.updated).toEqual([note]);
      } else {
        // In order, each once, on the stream that asked for it.
        expect(first.heard.updated).toEqual([hostname, note, hostname]);
        expect(streamOf(tagged[0])).toBe(streamOf(tagged[2]));
        expect(streamOf(tagged[1])).not.toBe(streamOf(tagged[0]));
      }
      expect(tagged.every((line) => streamOf(line)?.startsWith("listen:"))).toBe(true);
    });

    test("the server is subscribed once for every stream that wants a URI, and unsubscribed when the last one ends", async () => {
      const sandbox = scope.sandbox();
      sandbox.writeConfig({ mcpServers: { caps: capsEntry(sandbox, "caps") } });
      const proxy = await startProxy(sandbox, kind);
      const { client, heard } = await proxy.connect();
      const hostname = federated("caps", HOSTNAME);
      await untilListed(client, hostname);
      const a = await listen(client, { resourceSubscriptions: [hostname] });
      const b = await listen(client, { resourceSubscriptions: [hostname] });
      await a.close();
      // A stream opened after one of two ended: the server stayed subscribed for the other.
      const c = await listen(client, { resourceSubscriptions: [hostname] });
      expect(textOf(await callTool(client, "caps__touch_resource", { uri: HOSTNAME }))).toContain("touched");
      const tagged = await eventually(
        () => heard.tagged,
        (seen) => seen.length >= 2,
        10_000,
      );
      expect(new Set(tagged.map(streamOf)).size).toBe(2); // b and c, not a
      await b.close();
      await c.close();
      const log = await eventually(
        () => subscribeLog(sandbox, "caps"),
        (lines) => lines.length >= 2,
        10_000,
      );
      expect(log).toEqual([`subscribe ${HOSTNAME}`, `unsubscribe ${HOSTNAME}`]);
    });

    test("list changes reach a stream: a config edit adding a server, upstream_servers remove, an upstream's own", async () => {
      const sandbox = scope.sandbox();
      const config = (servers: Record<string, unknown>) => sandbox.writeConfig({ mcpServers: servers });
      config({ caps: capsEntry(sandbox, "caps") });
      const proxy = await startProxy(sandbox, kind);
      const { client, heard } = await proxy.connect();
      await untilListed(client, federated("caps", HOSTNAME));
      await listen(client, { promptsListChanged: true, resourcesListChanged: true });
      await settleListWatch();
      const told = async (what: string, kinds: ("prompts" | "resources")[]) => {
        const before = { ...heard };
        await eventually(() => kinds.every((k) => heard[k] > before[k]), Boolean, 10_000);
        expect({ what, told: kinds.filter((k) => heard[k] > before[k]) }).toEqual({ what, told: kinds });
      };

      // A person adds a server to the config file: once it is connected, both lists changed.
      const adding = told("config edit", ["prompts", "resources"]);
      config({ caps: capsEntry(sandbox, "caps"), more: capsEntry(sandbox, "more") });
      await adding;
      expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toContain("more__greet");

      // The agent removes it.
      const removing = told("upstream_servers remove", ["prompts", "resources"]);
      const removed = await client.callTool({
        name: "upstream_servers",
        arguments: { operation: "remove", name: "more" },
      });
      expect(removed.isError).toBeFalsy();
      await removing;
      expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).not.toContain("more__greet");

      // The upstream says its resources changed (its template was rewritten).
      const rewriting = told("the upstream's list_changed", ["resources"]);
      await callTool(client, "caps__rewrite_template", { description: "Notes, rewritten" });
      await rewriting;
    });

    test("serve's shutdown ends the stream gracefully", async () => {
      const sandbox = scope.sandbox();
      sandbox.writeConfig({ mcpServers: { caps: capsEntry(sandbox, "caps") } });
      const proxy = await startProxy(sandbox, kind);
      const { client } = await proxy.connect();
      const subscription = await listen(client, { promptsListChanged: true });
      await proxy.stop();
      expect(await subscription.closed).toBe("graceful");
    });

    test("attacker: a stream cannot subscribe to a resource of a server held for approval, and hears nothing from it", async () => {
      const sandbox = scope.sandbox();
      const pushes = join(sandbox.dir, "held-pushes.log");
      sandbox.writeConfig({
        mcpServers: {
          caps: capsEntry(sandbox, "caps"),
          held: capsEntry(sandbox, "held", {
            quarantined: true,
            env: { CAPS_PUSH_EVERY_MS: "100", CAPS_PUSH_LOG: pushes },
          }),
        },
      });
      const proxy = await startProxy(sandbox, kind);
      const { client, heard } = await proxy.connect();
      const mine = federated("caps", HOSTNAME);
      const theirs = federated("held", HOSTNAME);
      await untilListed(client, mine);
      await settleListWatch();
      const subscription = await listen(client, {
        promptsListChanged: true,
        resourcesListChanged: true,
        resourceSubscriptions: [theirs, mine],
      });
      expect(subscription.honoredFilter.resourceSubscriptions).toEqual([mine]);
      // The held server pushes updates and list changes at clients, unasked, several times over.
      const pushed = (existsSync(pushes) ? readFileSync(pushes, "utf8") : "").length;
      await eventually(
        () => readFileSync(pushes, "utf8").length,
        (length) => length >= pushed + 5 * "pushed\n".length,
        10_000,
      );
      // Then an update the stream did ask for comes through, after whatever the held server sent.
      await callTool(client, "caps__touch_resource", { uri: HOSTNAME });
      await eventually(
        () => heard.updated,
        (seen) => seen.length > 0,
        10_000,
      );
      expect(heard.updated).toEqual([mine]);
      expect({ prompts: heard.prompts, resources: heard.resources }).toEqual({ prompts: 0, resources: 0 });
      expect(subscribeLog(sandbox, "held")).toEqual([]);
    });
  });
}

describe("subscriptions/listen in passthrough (HTTP)", () => {
  test("a stream hears of the server's tool changes: its tool list is the server's own", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { fx: fixtureEntry({ args: ["--storm-tools"] }) } });
    const proxy = await startHttpProxy(sandbox, ["--passthrough", "fx"]);
    scope.defer(() => proxy.stop());
    const { client } = newClient("passthrough");
    let toolsChanged = 0;
    client.setNotificationHandler("notifications/tools/list_changed", () => {
      toolsChanged++;
    });
    await client.connect(new StreamableHTTPClientTransport(proxy.url));
    scope.defer(() => client.close());
    const subscription = await listen(client, { toolsListChanged: true });
    expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
    await client.callTool({ name: "storm_list_changed", arguments: { count: 1 } });
    expect(
      await eventually(
        () => toolsChanged,
        (count) => count > 0,
        10_000,
      ),
    ).toBeGreaterThan(0);
  });

  test("resource subscriptions use the server's own URIs", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { caps: capsEntry(sandbox, "caps") } });
    const proxy = await startHttpProxy(sandbox, ["--passthrough", "caps"]);
    scope.defer(() => proxy.stop());
    const { client, heard } = newClient("passthrough");
    await client.connect(new StreamableHTTPClientTransport(proxy.url));
    scope.defer(() => client.close());
    await untilListed(client, HOSTNAME);
    const subscription = await listen(client, { resourceSubscriptions: [HOSTNAME] });
    expect(subscription.honoredFilter).toEqual({ resourceSubscriptions: [HOSTNAME] });
    expect(textOf(await client.callTool({ name: "touch_resource", arguments: { uri: HOSTNAME } }))).toContain(
      "touched",
    );
    expect(
      await eventually(
        () => heard.updated,
        (seen) => seen.length > 0,
        10_000,
      ),
    ).toEqual([HOSTNAME]);
    expect(subscribeLog(sandbox, "caps")).toEqual([`subscribe ${HOSTNAME}`]);
  });
});

describe("bounds on listen streams", () => {
  test("over HTTP, streams count against maxSessions: one more is refused until one ends", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { caps: capsEntry(sandbox, "caps") } });
    const proxy = await startHttpProxy(sandbox, [], { MCPPROXY_MAX_SESSIONS: "1" });
    scope.defer(() => proxy.stop());
    const { client } = newClient("bounded");
    await client.connect(new StreamableHTTPClientTransport(proxy.url));
    scope.defer(() => client.close());
    const first = await listen(client, { promptsListChanged: true });
    await expect(listen(client, { promptsListChanged: true })).rejects.toThrow(/503|Too many/);
    await first.close();
    // The slot is free once the proxy sees the stream end.
    const again = await eventually(
      () => listen(client, { promptsListChanged: true }).catch(() => undefined),
      (subscription) => subscription !== undefined,
      10_000,
    );
    expect(again?.honoredFilter).toEqual({ promptsListChanged: true });
  });

  test(`over stdio, a client holds at most ${MAX_STDIO_LISTENS} streams`, async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: {} });
    const { client } = await (await startProxy(sandbox, "stdio")).connect();
    for (let i = 0; i < MAX_STDIO_LISTENS; i++) await listen(client, { promptsListChanged: true });
    await expect(listen(client, { promptsListChanged: true })).rejects.toThrow(/limit/i);
  });
});

describe("subscriptions/listen beside legacy sessions (HTTP)", () => {
  test("a legacy session and a stream share the server's subscription, and each gets the update", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { caps: capsEntry(sandbox, "caps") } });
    const proxy = await startProxy(sandbox, "http");
    const { client, heard } = await proxy.connect();
    const hostname = federated("caps", HOSTNAME);
    await untilListed(client, hostname);
    const legacy = new V1Client({ name: "legacy", version: "1" });
    const legacyUpdates: string[] = [];
    legacy.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      legacyUpdates.push(notification.params.uri);
    });
    await legacy.connect(new V1StreamableHTTPClientTransport(proxy.url as URL));
    scope.defer(() => legacy.close());

    await legacy.subscribeResource({ uri: hostname });
    const stream = await listen(client, { resourceSubscriptions: [hostname] });
    expect(textOf(await callTool(client, "caps__touch_resource", { uri: HOSTNAME }))).toContain("touched");
    await eventually(
      () => legacyUpdates.length + heard.updated.length,
      (count) => count >= 2,
      10_000,
    );
    expect(legacyUpdates).toEqual([hostname]);
    expect(heard.updated).toEqual([hostname]);

    // The legacy session lets go: the stream still holds the server's subscription.
    await legacy.unsubscribeResource({ uri: hostname });
    expect(textOf(await callTool(client, "caps__touch_resource", { uri: HOSTNAME }))).toContain("touched");
    await eventually(
      () => heard.updated,
      (seen) => seen.length >= 2,
      10_000,
    );
    expect(legacyUpdates).toEqual([hostname]);
    await stream.close();
    const log = await eventually(
      () => subscribeLog(sandbox, "caps"),
      (lines) => lines.length >= 2,
      10_000,
    );
    expect(log).toEqual([`subscribe ${HOSTNAME}`, `unsubscribe ${HOSTNAME}`]);
  });

  test("a legacy session that closes lets go of its subscriptions", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { caps: capsEntry(sandbox, "caps") } });
    const proxy = await startProxy(sandbox, "http");
    const legacy = new V1Client({ name: "legacy", version: "1" });
    const transport = new V1StreamableHTTPClientTransport(proxy.url as URL);
    await legacy.connect(transport);
    const hostname = federated("caps", HOSTNAME);
    await eventually(
      async () => (await legacy.listResources()).resources.map((resource) => resource.uri),
      (uris) => uris.includes(hostname),
      15_000,
    );
    await legacy.subscribeResource({ uri: hostname });
    await transport.terminateSession();
    await legacy.close();
    const log = await eventually(
      () => subscribeLog(sandbox, "caps"),
      (lines) => lines.length >= 2,
      10_000,
    );
    expect(log).toEqual([`subscribe ${HOSTNAME}`, `unsubscribe ${HOSTNAME}`]);
  });

  test("approving a held server reaches a stream as prompts and resources list_changed", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({
      mcpServers: {
        caps: capsEntry(sandbox, "caps"),
        held: capsEntry(sandbox, "held", { quarantined: true }),
      },
    });
    const proxy = await startProxy(sandbox, "http");
    const { client, heard } = await proxy.connect();
    await untilListed(client, federated("caps", HOSTNAME));
    await settleListWatch();
    await listen(client, { promptsListChanged: true, resourcesListChanged: true });
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(["caps__greet"]);
    const approved = await runCli(
      ["approve", "held", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
      sandbox.env(),
    );
    expect(approved.code).toBe(0);
    expect(await eventually(() => heard.prompts > 0 && heard.resources > 0, Boolean, 10_000)).toBe(true);
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual([
      "caps__greet",
      "held__greet",
    ]);
  });

  test("a prompt held after it changed, then approved, reaches a stream as prompts list_changed each time", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { caps: capsEntry(sandbox, "caps") } });
    const proxy = await startProxy(sandbox, "http");
    const { client, heard } = await proxy.connect();
    await untilListed(client, federated("caps", HOSTNAME));
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(["caps__greet"]);
    await settleListWatch();
    await listen(client, { promptsListChanged: true });
    const told = async (what: () => Promise<unknown>) => {
      const before = heard.prompts;
      await what();
      return eventually(
        () => heard.prompts,
        (count) => count > before,
        10_000,
      ).then((count) => count - before);
    };
    // The server rewrites its prompt (and says so); once listed, the changed prompt is held.
    expect(
      await told(() => callTool(client, "caps__rewrite_prompt", { description: "Greet, reworded" })),
    ).toBe(1);
    expect((await client.listPrompts()).prompts).toEqual([]);
    await settleListWatch();
    // A person approves the change in another process: the prompt is back, and the stream is told.
    const approving = told(() =>
      runCli(
        ["approve", "caps/greet", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
        sandbox.env(),
      ),
    );
    expect(await approving).toBeGreaterThan(0);
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.description)).toEqual([
      "Greet, reworded",
    ]);
  });

  test("a quiet stream gets keep-alives (listenKeepAliveMs) and, at shutdown, the empty answer to its request", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { caps: capsEntry(sandbox, "caps") } });
    const proxy = await startHttpProxy(sandbox, [], { MCPPROXY_LISTEN_KEEP_ALIVE_MS: "1000" });
    scope.defer(() => proxy.stop());
    const response = await fetch(proxy.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "subscriptions/listen",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "quiet-1",
        method: "subscriptions/listen",
        params: {
          notifications: { promptsListChanged: true },
          _meta: {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
          },
        },
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    let wire = "";
    const decoder = new TextDecoder();
    const reading = (async () => {
      for await (const chunk of response.body as ReadableStream<Uint8Array>)
        wire += decoder.decode(chunk, { stream: true });
    })();
    expect(
      await eventually(
        () => wire,
        (text) => text.includes(": keepalive"),
        10_000,
      ),
    ).toContain(": keepalive");
    const ack = JSON.parse(/^data: (.*)$/m.exec(wire)?.[1] ?? "{}");
    expect(ack).toMatchObject({
      method: "notifications/subscriptions/acknowledged",
      params: {
        notifications: { promptsListChanged: true },
        _meta: { "io.modelcontextprotocol/subscriptionId": "quiet-1" },
      },
    });
    await proxy.stop();
    await reading;
    const frames = [...wire.matchAll(/^data: (.*)$/gm)].map((match) => JSON.parse(match[1] ?? "{}"));
    expect(frames.at(-1)).toMatchObject({
      id: "quiet-1",
      result: { _meta: { "io.modelcontextprotocol/subscriptionId": "quiet-1" } },
    });
  });
});
