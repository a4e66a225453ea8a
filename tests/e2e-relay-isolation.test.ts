import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  cleanupAfterEach,
  eventually,
  FIXTURE,
  requireBinary,
  runCli,
  startHttpProxy,
  watchOutput,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * A server's request to "the client" reaches only the session whose call caused it. Two sessions
 * (two real SDK clients, each with its own "model") call the same upstream tool at once, and the
 * tool asks the client's model about what it was given. Each model must see its own session's
 * request only: a request answered by the other session's model hands one person's data to
 * another's. Over an HTTP upstream the request arrives on its call's own stream; over stdio the
 * server names the call's progress token, or the proxy cannot tell and refuses.
 *
 * Each test runs twice: with the two sessions as HTTP clients of `serve --transport http`, and as
 * two stdio clients whose `mcpproxy serve` attached to the background service (`mcpproxy start`)
 * as bridges: one service, two clients, the same isolation.
 */
const scope = cleanupAfterEach();

interface Model {
  client: Client;
  seen: string[];
}

/** A client whose model answers after a pause (so both calls are in flight together), naming itself. */
async function sessionWithModel(transport: Transport, name: string): Promise<Model> {
  const seen: string[] = [];
  const client = new Client({ name, version: "1" }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    const first = request.params.messages[0]?.content;
    const text = first && "text" in first ? String(first.text) : "";
    seen.push(text);
    await Bun.sleep(300);
    return { model: name, role: "assistant", content: { type: "text", text: `${name} read: ${text}` } };
  });
  await client.connect(transport);
  scope.defer(() => client.close());
  return { client, seen };
}

type Door = "http" | "bridge";

async function httpFixture() {
  const child = Bun.spawn([process.execPath, FIXTURE, "--http", "0", "--relay-tools"], {
    stdout: "pipe",
    stderr: "inherit",
  });
  scope.defer(() => child.kill());
  const port = await watchOutput(child.stdout).waitFor(/\{"port":(\d+)\}/, 10_000);
  return `http://127.0.0.1:${port}/mcp`;
}

/** The proxy, and how a session of it is opened: an HTTP client, or a stdio client through a bridge. */
async function proxyFor(door: Door, entry: Record<string, unknown>) {
  const sandbox = scope.sandbox();
  sandbox.writeConfig({ mcpServers: { fx: entry } });
  if (door === "http") {
    const proxy = await startHttpProxy(sandbox);
    scope.defer(() => proxy.stop());
    return {
      session: (name: string) => sessionWithModel(new StreamableHTTPClientTransport(proxy.url), name),
    };
  }
  const common = ["--config", sandbox.configPath, "--data-dir", sandbox.dataDir];
  expect((await runCli(["start", ...common], sandbox.env())).code).toBe(0);
  scope.defer(() => runCli(["stop", ...common], sandbox.env()));
  return {
    session: (name: string) =>
      sessionWithModel(
        new StdioClientTransport({
          command: requireBinary(),
          args: ["serve", ...common],
          env: sandbox.env(),
        }),
        name,
      ),
  };
}

const stdioEntry = (extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: [FIXTURE, "--relay-tools"],
  ...extra,
});

const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");

async function askBoth(a: Model, b: Model, args: Record<string, unknown> = {}) {
  const ask = (model: Model, prompt: string) =>
    model.client.callTool({
      name: "call_tool",
      arguments: { name: "fx__ask_model", arguments: { prompt, ...args } },
    });
  return Promise.all([ask(a, "private notes of A"), ask(b, "private notes of B")]);
}

/** Once the tool is indexed, a plain call of it is the plain lane's (server/calls/plain-lane.ts), not the SDK's way. */
async function indexed(model: Model) {
  const found = await eventually(
    () => model.client.callTool({ name: "retrieve_tools", arguments: { query: "ask the model" } }),
    (result) => textOf(result).includes("fx__ask_model"),
    30_000,
  );
  expect(textOf(found)).toContain("fx__ask_model");
}

for (const door of ["http", "bridge"] as const) {
  describe(`${door}: two sessions, concurrent calls, each model sees only its own request`, () => {
    test("an HTTP upstream: the request travels on its call's stream", async () => {
      const proxy = await proxyFor(door, { url: await httpFixture() });
      const a = await proxy.session("model-A");
      const b = await proxy.session("model-B");
      const [fromA, fromB] = await askBoth(a, b);
      expect(textOf(fromA)).toBe("model said: model-A read: private notes of A");
      expect(textOf(fromB)).toBe("model said: model-B read: private notes of B");
      expect(a.seen).toEqual(["private notes of A"]);
      expect(b.seen).toEqual(["private notes of B"]);
    });

    test("an HTTP upstream, both calls on their sessions' plain lanes", async () => {
      const proxy = await proxyFor(door, { url: await httpFixture() });
      const a = await proxy.session("model-A");
      const b = await proxy.session("model-B");
      await indexed(a);
      for (let round = 0; round < 3; round++) {
        const [fromA, fromB] = await askBoth(a, b);
        expect(textOf(fromA)).toBe("model said: model-A read: private notes of A");
        expect(textOf(fromB)).toBe("model said: model-B read: private notes of B");
      }
      expect(a.seen).toEqual(Array(3).fill("private notes of A"));
      expect(b.seen).toEqual(Array(3).fill("private notes of B"));
    });

    test("a stdio upstream that names its call's progress token", async () => {
      const proxy = await proxyFor(door, stdioEntry());
      const a = await proxy.session("model-A");
      const b = await proxy.session("model-B");
      const [fromA, fromB] = await askBoth(a, b, { name_call: true, together: 2 });
      expect(textOf(fromA)).toBe("model said: model-A read: private notes of A");
      expect(textOf(fromB)).toBe("model said: model-B read: private notes of B");
      expect(a.seen).toEqual(["private notes of A"]);
      expect(b.seen).toEqual(["private notes of B"]);
    });

    test("a stdio upstream that says nothing of its call: refused while two sessions call, delivered to one alone", async () => {
      const proxy = await proxyFor(door, stdioEntry());
      const a = await proxy.session("model-A");
      const b = await proxy.session("model-B");
      const [fromA, fromB] = await askBoth(a, b, { together: 2 });
      expect(fromA.isError).toBe(true);
      expect(fromB.isError).toBe(true);
      expect(textOf(fromA)).toContain("calls of several sessions were in flight");
      expect(a.seen).toEqual([]);
      expect(b.seen).toEqual([]);
      const alone = await a.client.callTool({
        name: "call_tool",
        arguments: { name: "fx__ask_model", arguments: { prompt: "only A now" } },
      });
      expect(textOf(alone)).toBe("model said: model-A read: only A now");
      expect(b.seen).toEqual([]);
    });
  });

  describe(`${door}: a request made outside any call`, () => {
    const later = async (model: Model) => {
      await model.client.callTool({
        name: "call_tool",
        arguments: { name: "fx__ask_model_later", arguments: { prompt: "after the call", ms: 100 } },
      });
      await Bun.sleep(1_000);
      const outcomes = await model.client.callTool({
        name: "call_tool",
        arguments: { name: "fx__later_outcomes" },
      });
      return JSON.parse(textOf(outcomes)) as string[];
    };

    test("is refused, and no session sees it", async () => {
      const proxy = await proxyFor(door, stdioEntry());
      const a = await proxy.session("model-A");
      const b = await proxy.session("model-B");
      const outcomes = await later(a);
      expect(outcomes).toHaveLength(1);
      expect(outcomes[0]).toContain("refused");
      expect(outcomes[0]).toContain("relayOutsideCalls");
      expect([...a.seen, ...b.seen]).toEqual([]);
    });

    test("with relayOutsideCalls, goes to the session that called the server, not to another", async () => {
      const proxy = await proxyFor(door, stdioEntry({ relayOutsideCalls: true }));
      const a = await proxy.session("model-A");
      const b = await proxy.session("model-B");
      expect(await later(a)).toEqual(["answered: model-A read: after the call"]);
      expect(a.seen).toEqual(["after the call"]);
      expect(b.seen).toEqual([]);
    });
  });
}
