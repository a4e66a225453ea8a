import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { MAX_SUBSCRIBED_URIS } from "../src/upstream/upstream-subscriptions.ts";
import {
  cleanupAfterEach,
  connectHttp,
  connectStdio,
  eventually,
  modernEntry,
  processesMatching,
  ROOT,
  type Sandbox,
  startHttpProxy,
  startModernHttpFixture,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * Issue 22, item 5: resource subscriptions to a 2026-07-28 upstream, which has no
 * resources/subscribe: the proxy keeps the URIs its clients want per server and asks for them on
 * the server's listen stream (`resourceSubscriptions`), opened again as they change and after a
 * reconnect. A 2025 client (v1 SDK, `resources/subscribe`) and a 2026 client (a listen stream)
 * both get the updates under the federated URI. The upstream is tests/fixtures/modern-server.ts
 * `--subscribable`, which notes each listen request's URIs in FIXTURE_LISTEN_LOG.
 */
const scope = cleanupAfterEach();
const A = "live://a";
const B = "live://b";
const federated = (uri: string) => `mcpproxy://live/${uri}`;

const listenLog = (sandbox: Sandbox): string[][] => {
  const path = join(sandbox.dir, "listen.log");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as string[]);
};

/** The upstream's listen requests until the last one asks for exactly `uris`. */
const untilListening = (sandbox: Sandbox, uris: string[]) =>
  eventually(
    () => listenLog(sandbox),
    (log) => JSON.stringify(log.at(-1)?.toSorted()) === JSON.stringify(uris.toSorted()),
    15_000,
  );

/** A stdio 2026-only subscribable upstream named `live` (with `--changing` its stream never closes). */
function liveEntry(sandbox: Sandbox, args: string[] = []) {
  return modernEntry({
    args: ["--modern-only", "--subscribable", ...args],
    env: {
      FIXTURE_LISTEN_LOG: join(sandbox.dir, "listen.log"),
      FIXTURE_START_LOG: join(sandbox.dir, "starts.log"),
    },
  });
}

const touch = (client: V1Client | Client, uri: string) =>
  client.callTool({ name: "call_tool", arguments: { name: "live__touch_resource", arguments: { uri } } });

const textOf = (result: unknown) =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");

/** A v1 (2025) client's heard updates. */
function hearUpdates(client: V1Client): string[] {
  const heard: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    heard.push(notification.params.uri);
  });
  return heard;
}

async function untilListed(client: V1Client | Client, uri: string) {
  const uris = await eventually(
    async () => (await client.listResources()).resources.map((resource) => resource.uri),
    (list) => list.includes(uri),
    15_000,
  );
  expect(uris).toContain(uri);
}

describe("a 2025 client subscribing to a 2026-07-28 upstream's resource", () => {
  test("gets its updates under the federated URI, only for what it subscribed to, and none after unsubscribing", async () => {
    const sandbox = scope.sandbox();
    // The upstream over HTTP, the proxy over stdio.
    const upstream = await startModernHttpFixture(["--modern-only", "--subscribable", "--changing"], {
      FIXTURE_LISTEN_LOG: join(sandbox.dir, "listen.log"),
    });
    scope.defer(() => upstream.stop());
    sandbox.writeConfig({ mcpServers: { live: { url: upstream.url } } });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    const { client } = proxy;
    const heard = hearUpdates(client);
    await untilListed(client, federated(A));
    // Its stream for tool changes is open, asking for no resource.
    await untilListening(sandbox, []);

    await client.subscribeResource({ uri: federated(A) });
    // subscribe resolved once the upstream acknowledged a stream asking for A.
    expect(listenLog(sandbox).at(-1)).toEqual([A]);
    expect(textOf(await touch(client, B))).toBe(`touched ${B}`);
    expect(textOf(await touch(client, A))).toBe(`touched ${A}`);
    expect(
      await eventually(
        () => heard,
        (seen) => seen.length > 0,
        10_000,
      ),
    ).toEqual([federated(A)]);

    await client.unsubscribeResource({ uri: federated(A) });
    // Narrowed again: the stream the upstream holds now asks for nothing.
    await untilListening(sandbox, []);
    await touch(client, A);
    // B subscribed and touched: its update comes after any late one of A would have.
    await client.subscribeResource({ uri: federated(B) });
    await touch(client, B);
    await eventually(
      () => heard,
      (seen) => seen.length > 1,
      10_000,
    );
    expect(heard).toEqual([federated(A), federated(B)]);
  });

  test("keeps the subscription when the upstream restarts", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { live: liveEntry(sandbox) } });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    const { client } = proxy;
    const heard = hearUpdates(client);
    await untilListed(client, federated(A));
    // No list changes declared: no stream until something is subscribed.
    expect(listenLog(sandbox)).toEqual([]);
    await client.subscribeResource({ uri: federated(A) });
    expect(listenLog(sandbox)).toEqual([[A]]);

    const starts = () => readFileSync(join(sandbox.dir, "starts.log"), "utf8").split("\n").filter(Boolean);
    const [pid] = starts();
    process.kill(Number(pid), "SIGKILL");
    // The next call starts it again; its new stream asks for A without being told again.
    await eventually(
      async () => textOf(await touch(client, B)),
      (text) => text === `touched ${B}`,
      15_000,
    );
    expect(starts().length).toBe(2);
    const log = await eventually(
      () => listenLog(sandbox),
      (lines) => lines.length >= 2,
      10_000,
    );
    expect(log).toEqual([[A], [A]]);
    await touch(client, A);
    expect(
      await eventually(
        () => heard,
        (seen) => seen.length > 0,
        10_000,
      ),
    ).toEqual([federated(A)]);
  });

  test(`an agent cannot grow a server's subscriptions past ${MAX_SUBSCRIBED_URIS}: the next one is refused, the upstream's stream stays bounded`, async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { live: liveEntry(sandbox) } });
    const proxy = await startHttpProxy(sandbox);
    scope.defer(() => proxy.stop());
    // A 2026 client fills the server's subscriptions with one listen stream of the most it may hold.
    const modern = new Client(
      { name: "filler", version: "1" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await modern.connect(new StreamableHTTPClientTransport(proxy.url));
    scope.defer(() => modern.close());
    await untilListed(modern, federated(A));
    const many = Array.from({ length: MAX_SUBSCRIBED_URIS }, (_, i) => federated(`live://x${i}`));
    const stream = await modern.listen({ resourceSubscriptions: many });
    expect(stream.honoredFilter.resourceSubscriptions?.length).toBe(MAX_SUBSCRIBED_URIS);
    await eventually(
      () => listenLog(sandbox).at(-1)?.length ?? 0,
      (count) => count === MAX_SUBSCRIBED_URIS,
      15_000,
    );
    // One more, from a 2025 session: a clear error, and nothing sent upstream for it.
    const legacy = await connectHttp(proxy.url);
    scope.defer(() => legacy.close());
    await expect(legacy.subscribeResource({ uri: federated(A) })).rejects.toThrow(
      `live already has ${MAX_SUBSCRIBED_URIS} resource subscriptions`,
    );
    expect(Math.max(...listenLog(sandbox).map((line) => line.length))).toBe(MAX_SUBSCRIBED_URIS);
    expect(listenLog(sandbox).some((line) => line.includes(A))).toBe(false);
    // The stream ends: the server's subscriptions are let go, and there is room again.
    await stream.close();
    await eventually(
      async () => {
        try {
          await legacy.subscribeResource({ uri: federated(A) });
          return true;
        } catch {
          return false;
        }
      },
      (ok) => ok,
      15_000,
    );
    expect(listenLog(sandbox).at(-1)).toEqual([A]);
  });
});

describe("a 2025 upstream's subscriptions", () => {
  test("are made again on its new session when it restarts", async () => {
    const sandbox = scope.sandbox();
    const log = join(sandbox.dir, "subscribe.log");
    const token = `caps-${crypto.randomUUID()}`;
    sandbox.writeConfig({
      mcpServers: {
        caps: {
          command: process.execPath,
          args: [join(ROOT, "tests", "fixtures", "capabilities-server.ts"), token],
          env: { CAPS_SUBSCRIBE_LOG: log },
        },
      },
    });
    const proxy = await connectStdio(sandbox);
    scope.defer(() => proxy.close());
    const { client } = proxy;
    const heard = hearUpdates(client);
    const hostname = "mcpproxy://caps/file:///etc/hostname";
    await untilListed(client, hostname);
    await client.subscribeResource({ uri: hostname });
    const lines = () => readFileSync(log, "utf8").split("\n").filter(Boolean);
    expect(lines()).toEqual(["subscribe file:///etc/hostname"]);
    for (const pid of processesMatching(token)) process.kill(pid, "SIGKILL");
    const touched = () =>
      client.callTool({
        name: "call_tool",
        arguments: { name: "caps__touch_resource", arguments: { uri: "file:///etc/hostname" } },
      });
    // Its new session is subscribed again, so touching sends the update.
    await eventually(
      async () => textOf(await touched()),
      (text) => /touched/.test(text) && lines().length === 2,
      15_000,
    );
    expect(lines()).toEqual(["subscribe file:///etc/hostname", "subscribe file:///etc/hostname"]);
    expect(
      await eventually(
        () => heard,
        (seen) => seen.length > 0,
        10_000,
      ),
    ).toContain(hostname);
  });
});

describe("a 2026-07-28 client's listen stream on a 2026-07-28 upstream's resource", () => {
  test("gets the updates tagged with its stream; when the stream ends the upstream's is narrowed", async () => {
    const sandbox = scope.sandbox();
    sandbox.writeConfig({ mcpServers: { live: liveEntry(sandbox, ["--changing"]) } });
    const proxy = await startHttpProxy(sandbox);
    scope.defer(() => proxy.stop());
    const client = new Client(
      { name: "listener", version: "1" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    const heard: string[] = [];
    client.setNotificationHandler("notifications/resources/updated", (notification) => {
      heard.push(
        `${notification.params.uri} ${String(notification.params._meta?.["io.modelcontextprotocol/subscriptionId"])}`,
      );
    });
    await client.connect(new StreamableHTTPClientTransport(proxy.url));
    scope.defer(() => client.close());
    await untilListed(client, federated(A));
    await untilListening(sandbox, []);
    const stream = await client.listen({ resourceSubscriptions: [federated(A)] });
    expect(stream.honoredFilter).toEqual({ resourceSubscriptions: [federated(A)] });
    await untilListening(sandbox, [A]);
    await touch(client, A);
    const seen = await eventually(
      () => heard,
      (lines) => lines.length > 0,
      10_000,
    );
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(new RegExp(`^${federated(A)} listen:`));

    await stream.close();
    await untilListening(sandbox, []);
    expect(listenLog(sandbox).at(-1)).toEqual([]);
  });
});
