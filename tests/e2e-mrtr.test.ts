import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  cleanupAfterEach,
  eventually,
  fixtureEntry,
  modernEntry,
  requireBinary,
  type Sandbox,
  startHttpFixture,
  startHttpProxy,
} from "./helpers.ts";

setDefaultTimeout(60_000);

/**
 * Multi-round-trip requests (MRTR, issue 22 item 6) through the proxy, in all four era pairs:
 * a 2026-07-28 client gets `input_required` with the question and a sealed `requestState`, and
 * retries with the answer; a 2025 client is asked the real way, on its session. The upstream is
 * a 2026 server asking with input_required (modern-server.ts --input-tools) or a 2025 server
 * asking during the call (fixture-server.ts --relay-tools), whose request the proxy parks.
 */
const scope = cleanupAfterEach();
const MODERN = "2026-07-28";

/** `old`: a 2025 (SDK v1) server; `new`: a 2026-only (SDK v2) server; both ask for input. */
function withAskingServers(sandbox: Sandbox, env: Record<string, string> = {}) {
  sandbox.writeConfig({
    mcpServers: {
      old: fixtureEntry({ args: ["--relay-tools", "--name", "old"], env }),
      new: modernEntry({ args: ["--modern-only", "--input-tools", "--name", "new"] }),
    },
  });
}

interface Answers {
  elicit?: (params: { message?: string }) => unknown;
  sampling?: unknown;
  roots?: unknown;
}
const ACCEPT = (answer: string) => () => ({ action: "accept", content: { answer } });
const ALL: Answers = {
  elicit: ACCEPT("Ada"),
  sampling: { model: "m", role: "assistant", content: { type: "text", text: "Paris" } },
  roots: { roots: [{ uri: "file:///work", name: "work" }] },
};

type Raw = Record<string, unknown> & {
  resultType?: string;
  inputRequests?: Record<string, { method: string; params?: { message?: string } }>;
  requestState?: string;
};

/** A v2 client pinned to 2026-07-28 that answers input rounds by hand (no auto-fulfilment). */
async function modernClient(
  connect: () => StreamableHTTPClientTransport | StdioClientTransport,
  capabilities: Record<string, unknown> = { elicitation: { form: {} }, sampling: {}, roots: {} },
) {
  const client = new Client(
    { name: "modern", version: "1" },
    { capabilities, versionNegotiation: { mode: { pin: MODERN } }, inputRequired: { autoFulfill: false } },
  );
  await client.connect(connect());
  scope.defer(() => client.close());
  /** One request, input_required allowed. */
  const send = (method: string, params: Record<string, unknown>) =>
    client.request({ method, params } as never, { allowInputRequired: true } as never) as Promise<Raw>;
  /** Answers every round from `answers` until the result; the rounds' questions are kept. */
  const roundTrip = async (method: string, params: Record<string, unknown>, answers: Answers = ALL) => {
    const asked: Raw["inputRequests"][] = [];
    let result = await send(method, params);
    while (result.resultType === "input_required") {
      asked.push(result.inputRequests);
      const inputResponses: Record<string, unknown> = {};
      for (const [key, request] of Object.entries(result.inputRequests ?? {})) {
        inputResponses[key] =
          request.method === "elicitation/create"
            ? answers.elicit?.(request.params ?? {})
            : request.method === "sampling/createMessage"
              ? answers.sampling
              : answers.roots;
      }
      result = await send(method, { ...params, inputResponses, requestState: result.requestState });
    }
    return { result, asked };
  };
  return { client, send, roundTrip };
}

async function httpProxy(sandbox: Sandbox, args: string[] = [], env: Record<string, string> = {}) {
  const proxy = await startHttpProxy(sandbox, args, env);
  scope.defer(() => proxy.stop());
  return proxy;
}

const stdioTransport = (sandbox: Sandbox, args: string[] = [], env: Record<string, string> = {}) =>
  new StdioClientTransport({
    command: requireBinary(),
    args: ["serve", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir, ...args],
    env: sandbox.env(env),
    stderr: "ignore",
  });

/** A 2026 client of `serve` over `kind` (more serve flags in `args`). */
async function modernOf(sandbox: Sandbox, kind: "stdio" | "http", args: string[] = [], env = {}) {
  if (kind === "stdio") return modernClient(() => stdioTransport(sandbox, args, env));
  const proxy = await httpProxy(sandbox, args, env);
  return modernClient(() => new StreamableHTTPClientTransport(proxy.url));
}

const textOf = (result: unknown) =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("\n");
const callTool = (name: string, args: Record<string, unknown> = {}) => ({
  name: "call_tool",
  arguments: { name, arguments: args },
});

describe("a 2026-07-28 client", () => {
  for (const kind of ["http", "stdio"] as const) {
    test(`of a 2026 upstream over ${kind}: elicitation, sampling and roots pass through, under the proxy's sealed state`, async () => {
      const sandbox = scope.sandbox();
      withAskingServers(sandbox);
      const { send, roundTrip } = await modernOf(sandbox, kind);
      const first = await send("tools/call", callTool("new__ask_name", { greeting: "hi" }));
      expect(first.resultType).toBe("input_required");
      expect(first.inputRequests?.name?.method).toBe("elicitation/create");
      // The upstream's own state travels inside the proxy's sealed one, which the client cannot read.
      expect(first.requestState).toStartWith("mcpproxy.1.");
      expect(first.requestState).not.toContain("modern-upstream-state");
      expect(Buffer.from(first.requestState!.slice(11), "base64url").toString()).not.toContain("new");
      const { result } = await roundTrip("tools/call", callTool("new__ask_name", { greeting: "hi" }));
      expect(textOf(result)).toBe("hi, Ada");
      expect(
        textOf((await roundTrip("tools/call", callTool("new__ask_model", { prompt: "capital?" }))).result),
      ).toBe("model said: Paris");
      expect(textOf((await roundTrip("tools/call", callTool("new__ask_roots"))).result)).toBe(
        "roots: file:///work",
      );
      // The key was made on first use, readable by its owner only.
      const key = join(sandbox.dataDir, "request-state.key");
      expect(existsSync(key)).toBe(true);
      expect(statSync(key).mode & 0o777).toBe(0o600);
    });

    test(`of a 2025 upstream over ${kind}: the server's requests become input rounds (elicitation, sampling, roots, two rounds, two at once)`, async () => {
      const sandbox = scope.sandbox();
      withAskingServers(sandbox);
      const { roundTrip } = await modernOf(sandbox, kind);
      const asked = await roundTrip("tools/call", callTool("old__ask_user", { question: "Your name?" }));
      expect(textOf(asked.result)).toBe("user said: Ada");
      expect(asked.asked).toEqual([
        {
          elicitation_1: {
            method: "elicitation/create",
            params: expect.objectContaining({ message: "Your name?" }),
          },
        },
      ]);
      const sampled = await roundTrip("tools/call", callTool("old__ask_model", { prompt: "capital?" }));
      expect(textOf(sampled.result)).toBe("model said: Paris");
      expect(Object.values(sampled.asked[0] ?? {})[0]?.method).toBe("sampling/createMessage");
      expect(textOf((await roundTrip("tools/call", callTool("old__ask_roots"))).result)).toBe(
        "roots: file:///work",
      );
      const twice = await roundTrip("tools/call", callTool("old__ask_twice"), {
        elicit: (params) => ({ action: "accept", content: { answer: `re: ${params.message}` } }),
      });
      expect(twice.asked).toHaveLength(2);
      expect(textOf(twice.result)).toBe(
        "first=re: first question, second=re: second question (after re: first question)",
      );
      const both = await roundTrip("tools/call", callTool("old__ask_both"), {
        elicit: (params) => ({ action: "accept", content: { answer: String(params.message).split(" ")[0] } }),
      });
      expect(textOf(both.result)).toBe("left=left, right=right");
      expect(both.asked.flatMap((round) => Object.keys(round ?? {}))).toHaveLength(2);
    });
  }

  test("prompts/get and resources/read ask too, of either era's server, and a retry's read is never cached", async () => {
    const sandbox = scope.sandbox();
    withAskingServers(sandbox);
    const { send, roundTrip } = await modernOf(sandbox, "http");
    // Prompts are offered once the proxy has seen (and pinned) them.
    await eventually(
      async () => JSON.stringify(await send("prompts/list", {})),
      (text) => text.includes("new__ask_prompt") && text.includes("old__ask_prompt"),
      10_000,
    );
    const message = (result: Raw) => (result.messages as { content: { text: string } }[])[0]?.content.text;
    expect(message((await roundTrip("prompts/get", { name: "new__ask_prompt" })).result)).toBe(
      "Write about Ada",
    );
    expect(message((await roundTrip("prompts/get", { name: "old__ask_prompt" })).result)).toBe(
      "Write about Ada",
    );
    for (const [server, uri] of [
      ["new", "input://secret"],
      ["old", "relay://secret"],
    ] as const) {
      const { result, asked } = await roundTrip("resources/read", { uri: `mcpproxy://${server}/${uri}` });
      expect(asked).toHaveLength(1);
      expect((result.contents as { text: string }[])[0]?.text).toBe("secret opened with Ada");
      // The 2026 server hints its read as public for a minute; a retry's answer is never cached.
      expect(result.ttlMs).toBe(0);
      expect(result.cacheScope).toBe("private");
    }
  });

  test("a tampered requestState, or one replayed for other arguments or another tool, is refused with -32602", async () => {
    const sandbox = scope.sandbox();
    withAskingServers(sandbox);
    const { send } = await modernOf(sandbox, "http");
    for (const tool of ["new__ask_name", "old__ask_user"]) {
      const args = { question: "Q?", greeting: "hi" };
      const first = await send("tools/call", callTool(tool, args));
      const state = first.requestState!;
      const key = Object.keys(first.inputRequests ?? {})[0]!;
      const retry = (params: Record<string, unknown>, requestState: string) =>
        send("tools/call", {
          ...params,
          inputResponses: { [key]: { action: "accept", content: { answer: "Eve" } } },
          requestState,
        });
      const flipped = `${state.slice(0, -6)}${state.slice(-6, -5) === "A" ? "B" : "A"}${state.slice(-5)}`;
      await expect(retry(callTool(tool, args), flipped)).rejects.toMatchObject({ code: -32602 });
      await expect(
        retry(callTool(tool, { ...args, question: "Other?", greeting: "yo" }), state),
      ).rejects.toMatchObject({
        code: -32602,
      });
      await expect(retry(callTool("new__ask_model", { prompt: "x" }), state)).rejects.toMatchObject({
        code: -32602,
      });
      await expect(retry({ name: "retrieve_tools", arguments: { query: "x" } }, state)).rejects.toMatchObject(
        {
          code: -32602,
        },
      );
      // A state that is not this proxy's at all (the upstream's own, say).
      await expect(retry(callTool(tool, args), "modern-upstream-state:ask_name")).rejects.toMatchObject({
        code: -32602,
      });
      // The genuine state, unchanged, still works after all that.
      expect(textOf(await retry(callTool(tool, args), state))).toMatch(/Eve$/);
    }
  });

  test("a state answered once is not accepted again", async () => {
    const sandbox = scope.sandbox();
    withAskingServers(sandbox);
    const { send } = await modernOf(sandbox, "http");
    const first = await send("tools/call", callTool("old__ask_twice"));
    const answer = { elicitation_1: { action: "accept", content: { answer: "one" } } };
    const second = await send("tools/call", {
      ...callTool("old__ask_twice"),
      inputResponses: answer,
      requestState: first.requestState,
    });
    expect(second.resultType).toBe("input_required");
    await expect(
      send("tools/call", {
        ...callTool("old__ask_twice"),
        inputResponses: answer,
        requestState: first.requestState,
      }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  test("that never retries: the parked request is refused upstream, the call cancelled, the entry freed", async () => {
    const sandbox = scope.sandbox();
    const log = join(sandbox.dir, "relay.log");
    withAskingServers(sandbox, { FIXTURE_RELAY_LOG: log });
    const { send } = await modernOf(sandbox, "http", [], { MCPPROXY_INPUT_WAIT_MS: "1000" });
    const first = await send("tools/call", callTool("old__ask_user", { question: "Anyone there?" }));
    expect(first.resultType).toBe("input_required");
    const failed = await eventually(
      () => (existsSync(log) ? readFileSync(log, "utf8") : ""),
      (text) => text.includes("elicitation failed"),
      10_000,
    );
    expect(failed).toContain("inputWaitMs");
    const cancelled = await eventually(
      async () => textOf(await send("tools/call", callTool("old__cancelled_calls"))),
      (text) => text.includes("ask_user"),
      5_000,
    );
    expect(cancelled).toContain("ask_user");
    // Its state lives no longer than the wait: refused like any invalid state.
    await expect(
      send("tools/call", {
        ...callTool("old__ask_user", { question: "Anyone there?" }),
        inputResponses: { elicitation_1: { action: "accept", content: { answer: "late" } } },
        requestState: first.requestState,
      }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  test("without the capability a 2025 server's request needs, the request is refused and the call says why", async () => {
    const sandbox = scope.sandbox();
    withAskingServers(sandbox);
    const proxy = await httpProxy(sandbox);
    const { send } = await modernClient(() => new StreamableHTTPClientTransport(proxy.url), { sampling: {} });
    const result = await send("tools/call", callTool("old__ask_user", { question: "Q?" }));
    expect(result.resultType).not.toBe("input_required");
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("does not support elicitation");
  });

  test("a 2026 server's -32021 reaches a 2026 client as its own -32021 over HTTP 400, and a 2025 client as an isError result", async () => {
    const sandbox = scope.sandbox();
    withAskingServers(sandbox);
    const proxy = await httpProxy(sandbox);
    for (const [name, params] of [
      ["call_tool", callTool("new__ask_model", { prompt: "capital?" })],
      ["ask_model (passthrough)", { name: "ask_model", arguments: { prompt: "capital?" } }],
    ] as const) {
      const url = name === "call_tool" ? proxy.url : (await httpProxy(sandbox, ["--passthrough", "new"])).url;
      const response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": MODERN,
          "mcp-method": "tools/call",
          "mcp-name": params.name,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: {
            ...params,
            _meta: {
              "io.modelcontextprotocol/protocolVersion": MODERN,
              "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
            },
          },
        }),
      });
      expect(response.status, name).toBe(400);
      const body = (await response.json()) as { error?: { code: number; data?: unknown } };
      expect(body.error?.code, name).toBe(-32021);
      expect(body.error?.data, name).toEqual({ requiredCapabilities: { sampling: {} } });
    }
    const legacy = new V1Client({ name: "no-sampling", version: "1" }, { capabilities: {} });
    await legacy.connect(new V1StreamableHTTPClientTransport(proxy.url));
    scope.defer(() => legacy.close());
    const result = await legacy.callTool(callTool("new__ask_model", { prompt: "capital?" }));
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("-32021");
  });

  test("through --passthrough, a 2025 server's tool asks under its own name", async () => {
    const sandbox = scope.sandbox();
    withAskingServers(sandbox);
    const { roundTrip } = await modernOf(sandbox, "http", ["--passthrough", "old"]);
    const { result, asked } = await roundTrip("tools/call", {
      name: "ask_user",
      arguments: { question: "Q?" },
    });
    expect(asked).toHaveLength(1);
    expect(textOf(result)).toBe("user said: Ada");
  });
});

describe("two 2026 clients calling the same 2025 server at once", () => {
  for (const upstream of ["http", "stdio naming its call"] as const) {
    test(`each gets only its own question (${upstream} upstream)`, async () => {
      const sandbox = scope.sandbox();
      const entry =
        upstream === "http"
          ? {
              url: await (async () => {
                const fixture = await startHttpFixture("old", ["--relay-tools"]);
                scope.defer(fixture.stop);
                return fixture.url;
              })(),
            }
          : fixtureEntry({ args: ["--relay-tools", "--name", "old"] });
      sandbox.writeConfig({ mcpServers: { old: entry } });
      const proxy = await httpProxy(sandbox);
      const a = await modernClient(() => new StreamableHTTPClientTransport(proxy.url));
      const b = await modernClient(() => new StreamableHTTPClientTransport(proxy.url));
      const ask = (client: typeof a, who: string) =>
        client.roundTrip(
          "tools/call",
          callTool("old__ask_user", { question: `private question of ${who}`, name_call: true }),
          {
            elicit: (params) => ({ action: "accept", content: { answer: `${who} read: ${params.message}` } }),
          },
        );
      const [fromA, fromB] = await Promise.all([ask(a, "A"), ask(b, "B")]);
      expect(JSON.stringify(fromA.asked)).toContain("private question of A");
      expect(JSON.stringify(fromA.asked)).not.toContain("of B");
      expect(JSON.stringify(fromB.asked)).toContain("private question of B");
      expect(JSON.stringify(fromB.asked)).not.toContain("of A");
      expect(textOf(fromA.result)).toBe("user said: A read: private question of A");
      expect(textOf(fromB.result)).toBe("user said: B read: private question of B");
    });
  }
});

describe("a 2025 (SDK v1) client", () => {
  /** A v1 client that answers elicitation, sampling and roots on its session, recording what it was asked. */
  function v1Client() {
    const seen: string[] = [];
    const client = new V1Client(
      { name: "legacy", version: "1" },
      { capabilities: { elicitation: {}, sampling: {}, roots: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      seen.push(`elicit: ${request.params.message}`);
      return { action: "accept", content: { answer: "Bob" } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      seen.push("sampling");
      return { model: "m", role: "assistant", content: { type: "text", text: "Rome" } };
    });
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      seen.push("roots");
      return { roots: [{ uri: "file:///legacy" }] };
    });
    scope.defer(() => client.close());
    return { client, seen };
  }

  for (const kind of ["http", "stdio"] as const) {
    test(`over ${kind}: a 2026 upstream's input_required is asked on its session, and a 2025 upstream's requests as before`, async () => {
      const sandbox = scope.sandbox();
      withAskingServers(sandbox);
      const { client, seen } = v1Client();
      if (kind === "http") {
        const proxy = await httpProxy(sandbox);
        await client.connect(new V1StreamableHTTPClientTransport(proxy.url));
      } else {
        await client.connect(
          new V1StdioClientTransport({
            command: requireBinary(),
            args: ["serve", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir],
            env: sandbox.env(),
            stderr: "ignore",
          }),
        );
      }
      const call = async (name: string, args: Record<string, unknown> = {}) =>
        textOf(await client.callTool(callTool(name, args)));
      expect(await call("new__ask_name", { greeting: "hey" })).toBe("hey, Bob");
      expect(await call("new__ask_model", { prompt: "capital?" })).toBe("model said: Rome");
      expect(await call("new__ask_roots")).toBe("roots: file:///legacy");
      expect(await call("old__ask_user", { question: "Old question?" })).toBe("user said: Bob");
      expect(seen).toEqual(["elicit: What is your name?", "sampling", "roots", "elicit: Old question?"]);
      const prompt = await client.getPrompt({ name: "new__ask_prompt" });
      expect((prompt.messages[0]?.content as { text?: string } | undefined)?.text).toBe("Write about Bob");
      // A 2025 server asking during prompts/get reaches the session whose request caused it.
      const old = await client.getPrompt({ name: "old__ask_prompt" });
      expect((old.messages[0]?.content as { text?: string } | undefined)?.text).toBe("Write about Bob");
      expect(seen.at(-1)).toBe("elicit: Which topic?");
    });
  }
});
