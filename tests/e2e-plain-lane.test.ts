import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { BINARY, cleanupAfterEach, fixtureEntry, initializeRequest, requireBinary } from "./helpers.ts";
import { callTool, LANE_CALLS, LANE_FIXTURE_ARGS, STEP_ASIDE_CALLS, WARM_UP } from "./support/lane-cases.ts";

setDefaultTimeout(90_000);

/**
 * The plain lane (src/server/calls/plain-lane.ts) held to the SDK's way, through the binary: each
 * call is sent twice on one 2025 stdio session, plain (the lane takes it) and with an empty `_meta`
 * (which the lane leaves to the SDK's way), and the two answers must be the same. That the lane took
 * the first is read from the answer's key order: the lane writes `jsonrpc` first, the SDK `result`.
 */

const scope = cleanupAfterEach();

interface Answer {
  id?: unknown;
  result?: unknown;
  error?: unknown;
  raw: string;
}

/** A raw line client on the binary's stdio, answering the server's sampling requests itself. */
async function openSession(config: Record<string, unknown>, args: string[] = []) {
  requireBinary();
  const sandbox = scope.sandbox();
  sandbox.writeConfig(config);
  const child = Bun.spawn(
    [BINARY, "serve", "--config", sandbox.configPath, "--data-dir", sandbox.dataDir, ...args],
    {
      env: sandbox.env(),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
    },
  );
  scope.defer(async () => {
    child.stdin.end();
    await child.exited;
  });
  const waiting = new Map<string, (answer: Answer) => void>();
  const seen: Answer[] = [];
  const write = (message: unknown) => {
    child.stdin.write(`${JSON.stringify(message)}\n`);
    child.stdin.flush();
  };
  void (async () => {
    let buffered = "";
    const decoder = new TextDecoder();
    for await (const chunk of child.stdout) {
      buffered += decoder.decode(chunk, { stream: true });
      for (let at = buffered.indexOf("\n"); at >= 0; at = buffered.indexOf("\n")) {
        const line = buffered.slice(0, at);
        buffered = buffered.slice(at + 1);
        const message = JSON.parse(line) as Answer & { method?: string };
        if (message.method === "sampling/createMessage" && message.id !== undefined) {
          write({
            jsonrpc: "2.0",
            id: message.id,
            result: { role: "assistant", content: { type: "text", text: "the model's words" }, model: "m" },
          });
          continue;
        }
        if (message.method !== undefined) continue;
        const answer = { ...message, raw: line };
        seen.push(answer);
        waiting.get(String(message.id))?.(answer);
      }
    }
  })();
  const request = (id: string, method: string, params: unknown) =>
    new Promise<Answer>((resolve) => {
      waiting.set(id, resolve);
      write({ jsonrpc: "2.0", id, method, params });
    });
  const init = initializeRequest("init");
  (init.params as { capabilities: Record<string, unknown> }).capabilities = { sampling: {} };
  await new Promise<Answer>((resolve) => {
    waiting.set("init", resolve);
    write(init);
  });
  write({ jsonrpc: "2.0", method: "notifications/initialized" });
  let counter = 0;
  /** The same call plain and with an empty `_meta`: [lane's answer, SDK way's answer]. */
  const both = async (params: { name: string; arguments?: unknown }) => {
    const lane = await request(`lane-${++counter}`, "tools/call", params);
    const sdk = await request(`sdk-${counter}`, "tools/call", { ...params, _meta: {} });
    return [lane, sdk] as const;
  };
  return { request, write, both, seen };
}

const isLane = (answer: Answer) => answer.raw.startsWith('{"jsonrpc"');

describe("the plain lane answers as the SDK's way does", () => {
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
      expect({ result: lane.result, error: lane.error }).toEqual({ result: sdk.result, error: sdk.error });
    }
  });

  test("calls it does not serve whole go the SDK's way: an unknown tool, arguments that fail their check", async () => {
    const session = await openSession({ mcpServers: { fixture: fixtureEntry() } });
    await session.request("warm", "tools/call", WARM_UP);
    for (const params of STEP_ASIDE_CALLS) {
      const [plain, sdk] = await session.both(params);
      expect(isLane(plain)).toBe(false);
      expect({ result: plain.result, error: plain.error }).toEqual({ result: sdk.result, error: sdk.error });
    }
  });

  test("the idle clock: a call with no answer is cancelled on the server and told as the SDK's way tells it", async () => {
    const session = await openSession({
      mcpServers: { fixture: { ...fixtureEntry(), callTimeoutMs: 400 } },
    });
    await session.request("warm", "tools/call", WARM_UP);
    const [lane, sdk] = await session.both(callTool("fixture__sleep_then_answer", { ms: 3_000 }));
    expect(isLane(lane)).toBe(true);
    expect({ result: lane.result, error: lane.error }).toEqual({ result: sdk.result, error: sdk.error });
    expect(JSON.stringify(lane.result)).toContain("callTimeoutMs");
    const cancelled = await session.request("c", "tools/call", callTool("fixture__cancelled_calls"));
    // Both calls were cancelled on the server (it lists each as tool:id).
    expect((JSON.stringify(cancelled.result).match(/sleep_then_answer:/g) ?? []).length).toBe(2);
  });

  test("a client's cancellation reaches the server and the call is not answered", async () => {
    const session = await openSession({ mcpServers: { fixture: fixtureEntry() } });
    await session.request("warm", "tools/call", WARM_UP);
    void session.request("slow", "tools/call", callTool("fixture__sleep_then_answer", { ms: 2_000 }));
    await Bun.sleep(300);
    session.write({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: "slow", reason: "the user stopped it" },
    });
    await Bun.sleep(2_500);
    expect(session.seen.some((answer) => answer.id === "slow")).toBe(false);
    const cancelled = await session.request("c", "tools/call", callTool("fixture__cancelled_calls"));
    expect((JSON.stringify(cancelled.result).match(/sleep_then_answer:/g) ?? []).length).toBe(1);
    // The session goes on.
    const after = await session.request("after", "tools/call", callTool("fixture__echo", { message: "on" }));
    expect(isLane(after)).toBe(true);
    expect(JSON.stringify(after.result)).toContain("on");
  });

  test("serve --passthrough: the server's tools by their own names", async () => {
    const session = await openSession(
      { mcpServers: { fixture: fixtureEntry({ args: ["--error-tools"] }) } },
      ["--passthrough", "fixture"],
    );
    await session.request("warm", "tools/call", { name: "echo", arguments: { message: "x" }, _meta: {} });
    for (const params of [
      { name: "echo", arguments: { message: "hello" } },
      { name: "always_fails", arguments: {} },
      { name: "fail_with", arguments: { text: "no" } },
    ]) {
      const [lane, sdk] = await session.both(params);
      expect(isLane(lane)).toBe(true);
      expect({ result: lane.result, error: lane.error }).toEqual({ result: sdk.result, error: sdk.error });
    }
    // A name the server does not list, and the proxy's own tools, which passthrough does not offer.
    for (const params of [{ name: "no_such_tool" }, callTool("fixture__echo", { message: "x" })]) {
      const [plain, sdk] = await session.both(params);
      expect(isLane(plain)).toBe(false);
      expect({ result: plain.result, error: plain.error }).toEqual({ result: sdk.result, error: sdk.error });
    }
  });

  test("its calls are counted as the SDK's way counts them", async () => {
    const session = await openSession({ mcpServers: { fixture: fixtureEntry() } });
    await session.request("warm", "tools/call", WARM_UP);
    for (let i = 0; i < 3; i++) await session.both(callTool("fixture__echo", { message: `m${i}` }));
    await session.both(callTool("fixture__always_fails"));
    const stat = await session.request("stat", "tools/call", { name: "tools_stat", arguments: {} });
    type Figures = { tool: string; calls: number; successes: number; isErrors: number };
    const top = (stat.result as { structuredContent: { top: Figures[] } }).structuredContent.top;
    // The warm-up, then three of each way; two of each way for the failing tool.
    expect(top.find((figures) => figures.tool === "echo")).toMatchObject({ calls: 7, successes: 7 });
    expect(top.find((figures) => figures.tool === "always_fails")).toMatchObject({ calls: 2, isErrors: 2 });
  });
});
