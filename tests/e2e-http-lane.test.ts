import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { cleanupAfterEach, fixtureEntry, initializeRequest, startHttpProxy } from "./helpers.ts";
import { callTool, LANE_CALLS, LANE_FIXTURE_ARGS, STEP_ASIDE_CALLS, WARM_UP } from "./support/lane-cases.ts";

setDefaultTimeout(90_000);

/**
 * The plain lane over streamable HTTP (src/server/transport/http-lane.ts) held to the SDK's way,
 * through the binary: each call is posted twice on one 2025 session, plain (the lane takes it) and
 * with an empty `_meta` (which the lane leaves to the SDK's way), and the two answers must be the
 * same. That the lane took the first is read from its answer's key order (the lane writes
 * `jsonrpc` first, the SDK `result`); whether it came whole or as a stream, from its headers (a
 * whole body has a Content-Length).
 */

const scope = cleanupAfterEach();

interface Posted {
  status: number;
  /** The answer's JSON text (the last `data:` event of the body), if any. */
  raw: string | undefined;
  answer: { id?: unknown; result?: unknown; error?: unknown } | undefined;
  isWhole: boolean;
  /** The methods of the requests and notifications the server sent on the POST's stream, in order. */
  before: string[];
}

/** A raw HTTP client of one session, answering the server's sampling requests itself. */
async function openSession(config: Record<string, unknown>, args: string[] = []) {
  const sandbox = scope.sandbox();
  sandbox.writeConfig(config);
  const proxy = await startHttpProxy(sandbox, args);
  scope.defer(() => proxy.stop());
  const headers: Record<string, string> = {
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
  };
  const post = (message: unknown, extra: Record<string, string> = {}) =>
    fetch(proxy.url, { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify(message) });
  /** Reads a POST's answer event by event, answering a sampling request as it comes. */
  const read = async (response: Response): Promise<Posted> => {
    const before: string[] = [];
    let raw: string | undefined;
    let buffered = "";
    const decoder = new TextDecoder();
    if (response.body) {
      for await (const chunk of response.body) {
        buffered += decoder.decode(chunk, { stream: true });
        for (let at = buffered.indexOf("\n\n"); at >= 0; at = buffered.indexOf("\n\n")) {
          const event = buffered.slice(0, at);
          buffered = buffered.slice(at + 2);
          const data = event
            .split("\n")
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).trim())
            .join("\n");
          if (!data) continue;
          const message = JSON.parse(data) as { id?: unknown; method?: string };
          if (message.method === undefined) {
            raw = data;
            continue;
          }
          before.push(message.method);
          if (message.method === "sampling/createMessage") {
            const answered = await post({
              jsonrpc: "2.0",
              id: message.id,
              result: { role: "assistant", content: { type: "text", text: "the model's words" }, model: "m" },
            });
            expect(answered.status).toBe(202);
          }
        }
      }
    }
    return {
      status: response.status,
      raw,
      answer: raw === undefined ? undefined : JSON.parse(raw),
      isWhole: response.headers.get("content-length") !== null,
      before,
    };
  };
  const init = initializeRequest("init");
  (init.params as { capabilities: Record<string, unknown> }).capabilities = { sampling: {} };
  const opened = await post(init);
  const session = opened.headers.get("mcp-session-id");
  if (!session) throw new Error(`no session: ${opened.status} ${await opened.text()}`);
  await opened.text();
  headers["mcp-session-id"] = session;
  headers["mcp-protocol-version"] = "2025-06-18";
  expect((await post({ jsonrpc: "2.0", method: "notifications/initialized" })).status).toBe(202);
  let counter = 0;
  const request = async (id: string, method: string, params: unknown) =>
    read(await post({ jsonrpc: "2.0", id, method, params }));
  /** The same call plain and with an empty `_meta`: [lane's answer, SDK way's answer]. */
  const both = async (params: { name: string; arguments?: unknown }) => {
    const lane = await request(`lane-${++counter}`, "tools/call", params);
    const sdk = await request(`sdk-${counter}`, "tools/call", { ...params, _meta: {} });
    return [lane, sdk] as const;
  };
  return { post, read, request, both };
}

const isLane = (posted: Posted) => posted.raw?.startsWith('{"jsonrpc"') === true;
const outcome = (posted: Posted) => ({ result: posted.answer?.result, error: posted.answer?.error });

describe("the plain lane over streamable HTTP answers as the SDK's way does", () => {
  test("results, isError results with alternatives, a server's JSON-RPC error, a result too deep, a relayed sampling request", async () => {
    const session = await openSession({
      mcpServers: {
        fixture: fixtureEntry({ args: LANE_FIXTURE_ARGS }),
      },
    });
    await session.request("warm", "tools/call", WARM_UP);
    for (const params of LANE_CALLS) {
      const [lane, sdk] = await session.both(params);
      expect(isLane(lane)).toBe(true);
      expect(isLane(sdk)).toBe(false);
      expect(outcome(lane)).toEqual(outcome(sdk));
      expect(lane.before).toEqual(sdk.before);
    }
    // A call that causes nothing on the way is answered whole; one whose server asks the client
    // something is a stream, the question on it before the answer.
    const [plain] = await session.both(callTool("fixture__echo", { message: "whole" }));
    expect(plain.isWhole).toBe(true);
    const [asking] = await session.both(callTool("fixture__ask_model", { prompt: "stream" }));
    expect(asking.isWhole).toBe(false);
    expect(asking.before).toEqual(["sampling/createMessage"]);
    expect(JSON.stringify(asking.answer?.result)).toContain("the model's words");
  });

  test("a call that takes a while: the same answer", async () => {
    const session = await openSession({ mcpServers: { fixture: fixtureEntry() } });
    await session.request("warm", "tools/call", WARM_UP);
    const [lane, sdk] = await session.both(callTool("fixture__sleep_then_answer", { ms: 1_500 }));
    expect(isLane(lane)).toBe(true);
    expect(outcome(lane)).toEqual(outcome(sdk));
  });

  test("calls it does not serve whole go the SDK's way, and so do posts the transport would refuse", async () => {
    const session = await openSession({ mcpServers: { fixture: fixtureEntry() } });
    await session.request("warm", "tools/call", WARM_UP);
    for (const params of STEP_ASIDE_CALLS) {
      const [plain, sdk] = await session.both(params);
      expect(isLane(plain)).toBe(false);
      expect(outcome(plain)).toEqual(outcome(sdk));
    }
    const call = { jsonrpc: "2.0", id: "refused", method: "tools/call", params: callTool("fixture__echo") };
    // The transport's own answers to an Accept without event streams and an unknown protocol version.
    const notAcceptable = await session.post(call, { accept: "application/json" });
    expect(notAcceptable.status).toBe(406);
    const unknownVersion = await session.post(call, { "mcp-protocol-version": "1999-01-01" });
    expect(unknownVersion.status).toBe(400);
    expect(await unknownVersion.text()).toContain("Unsupported protocol version");
    // A batch of one is the SDK's to answer, as a stream.
    const batch = await session.read(
      await session.post([{ ...call, id: "batch", params: callTool("fixture__echo", { message: "b" }) }]),
    );
    expect(batch.status).toBe(200);
    expect(isLane(batch)).toBe(false);
  });

  test("a client's cancellation reaches the server, and the call's answer ends empty", async () => {
    const session = await openSession({ mcpServers: { fixture: fixtureEntry() } });
    await session.request("warm", "tools/call", WARM_UP);
    const slow = session.request("slow", "tools/call", callTool("fixture__sleep_then_answer", { ms: 2_000 }));
    await Bun.sleep(300);
    const cancel = await session.post({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: "slow", reason: "the user stopped it" },
    });
    expect(cancel.status).toBe(202);
    const ended = await slow;
    expect(ended.status).toBe(200);
    expect(ended.answer).toBeUndefined();
    const cancelled = await session.request("c", "tools/call", callTool("fixture__cancelled_calls"));
    expect((JSON.stringify(cancelled.answer?.result).match(/sleep_then_answer:/g) ?? []).length).toBe(1);
    // The session goes on, by the lane.
    const after = await session.request("after", "tools/call", callTool("fixture__echo", { message: "on" }));
    expect(isLane(after)).toBe(true);
    expect(JSON.stringify(after.answer?.result)).toContain("on");
  });

  test("serve --passthrough: the server's tools by their own names", async () => {
    const session = await openSession(
      { mcpServers: { fixture: fixtureEntry({ args: ["--error-tools"] }) } },
      ["--passthrough", "fixture"],
    );
    await session.request("warm", "tools/call", { name: "echo", arguments: { message: "x" }, _meta: {} });
    for (const params of [
      { name: "echo", arguments: { message: "hello" } },
      { name: "fail_with", arguments: { text: "no" } },
    ]) {
      const [lane, sdk] = await session.both(params);
      expect(isLane(lane)).toBe(true);
      expect(outcome(lane)).toEqual(outcome(sdk));
    }
  });
});
