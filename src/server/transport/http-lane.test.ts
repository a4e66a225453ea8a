import { describe, expect, test } from "bun:test";
import {
  type AuthInfo,
  type JSONRPCMessage,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { attachPlainLane, type PlainLane } from "../calls/plain-lane.ts";
import { createHttpLane } from "./http-lane.ts";

/**
 * The HTTP lane on the SDK's own transport and Server, with a lane of the test's that takes the
 * calls named "lane" and answers when told: what it answers, and when the transport answers instead.
 * tests/e2e-http-lane.test.ts holds the real lane to the SDK's way through the binary.
 */
const SESSION = "session-1";
const VERSION = "2025-06-18";

async function open(keepAliveMs = 15_000) {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => SESSION,
    keepAliveMs,
  });
  const server = new Server({ name: "s", version: "1" }, { capabilities: { tools: {}, logging: {} } });
  server.setRequestHandler("tools/call", async () => ({
    content: [{ type: "text", text: "the SDK's way" }],
  }));
  await server.connect(transport);
  const initialized = await transport.handleRequest(
    post({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "t", version: "1" } },
    }),
  );
  await initialized.text();
  const taken: { id: unknown; reply: (message: JSONRPCMessage) => Promise<void>; onItsStream?: boolean }[] =
    [];
  const cancelled: unknown[] = [];
  const lane: PlainLane = {
    claim(message, reply, onItsStream) {
      const asked = message as {
        id?: unknown;
        method?: string;
        params?: { name?: string; requestId?: unknown };
      };
      if (asked.method === "notifications/cancelled") {
        if (!taken.some((call) => call.id === asked.params?.requestId)) return false;
        cancelled.push(asked.params?.requestId);
        return true;
      }
      if (asked.method !== "tools/call" || asked.params?.name !== "lane") return false;
      taken.push({ id: asked.id, reply, onItsStream });
      return true;
    },
  };
  attachPlainLane(server, lane);
  const httpLane = createHttpLane(transport, server);
  const answer = (at: number, text: string) =>
    taken[at]!.reply({
      jsonrpc: "2.0",
      id: taken[at]!.id,
      result: { content: [{ type: "text", text }] },
    } as JSONRPCMessage);
  return { transport, server, httpLane, taken, cancelled, answer };
}

function post(body: unknown, headers: Record<string, string> = {}): Request {
  return new Request("http://127.0.0.1/mcp", {
    method: "POST",
    headers: {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "mcp-session-id": SESSION,
      "mcp-protocol-version": VERSION,
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

const call = (id: unknown, name = "lane") => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {} },
});

/** The lane's answer to `body`, or undefined where it leaves the POST to the transport. */
function serve(
  lane: Awaited<ReturnType<typeof open>>,
  body: unknown,
  headers?: Record<string, string>,
  auth?: AuthInfo,
) {
  return lane.httpLane.serve(post(body, headers), body, auth);
}

describe("the HTTP lane", () => {
  test("a quick call is answered whole: one message event, with the transport's headers", async () => {
    const lane = await open();
    const served = serve(lane, call(7));
    expect(served).toBeDefined();
    expect(lane.taken[0]).toMatchObject({ id: 7, onItsStream: true });
    await lane.answer(0, "quick");
    const response = await served!;
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(response.headers.get("mcp-session-id")).toBe(SESSION);
    expect(response.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(await response.text()).toBe(
      `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "quick" }] } })}\n\n`,
    );
  });

  test("what the Server sends related to a lane call goes on that call's stream, before its answer", async () => {
    const lane = await open();
    const served = serve(lane, call("a"));
    const other = serve(lane, call("b"));
    await lane.server.notification(
      { method: "notifications/message", params: { level: "info", data: "for a" } },
      { relatedRequestId: "a" },
    );
    const response = await served!;
    await lane.answer(0, "done a");
    await lane.answer(1, "done b");
    const text = await response.text();
    expect(text.indexOf("for a")).toBeGreaterThan(0);
    expect(text.indexOf("for a")).toBeLessThan(text.indexOf("done a"));
    expect(text).not.toContain("done b");
    expect(await (await other!).text()).not.toContain("for a");
  });

  test("a call still running at the keep-alive gets its stream then, kept alive", async () => {
    const lane = await open(40);
    const served = serve(lane, call(1));
    const response = await served!;
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toBe(": keepalive\n\n");
    await lane.answer(0, "late");
    let rest = "";
    for (let next = await reader.read(); !next.done; next = await reader.read())
      rest += new TextDecoder().decode(next.value);
    expect(rest.endsWith(`"text":"late"}]}}\n\n`)).toBe(true);
  });

  test("a cancellation of a lane call is the lane's: 202, and the call's answer ends empty", async () => {
    const lane = await open();
    const served = serve(lane, call(3));
    const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 3 } };
    const accepted = await serve(lane, cancel)!;
    expect(accepted.status).toBe(202);
    expect(lane.cancelled).toEqual([3]);
    expect(await (await served!).text()).toBe("");
    // A cancellation of no lane call is the transport's.
    expect(serve(lane, { ...cancel, params: { requestId: 99 } })).toBeUndefined();
  });

  test("the transport answers whatever it would refuse or handle otherwise", async () => {
    const lane = await open();
    expect(serve(lane, call(1, "not-lane"))).toBeUndefined();
    expect(serve(lane, [call(1)])).toBeUndefined();
    expect(serve(lane, call(1), { accept: "application/json" })).toBeUndefined();
    expect(serve(lane, call(1), { "content-type": "text/plain" })).toBeUndefined();
    expect(serve(lane, call(1), { "mcp-protocol-version": "1999-01-01" })).toBeUndefined();
    expect(serve(lane, call(1), { "mcp-session-id": "another" })).toBeUndefined();
    const principal: AuthInfo = { token: "t", clientId: "c", scopes: [], extra: { subject: "someone" } };
    expect(serve(lane, call(1), {}, principal)).toBeUndefined();
    expect(lane.taken).toEqual([]);
    // An id the lane holds is the transport's to answer.
    expect(serve(lane, call(5))).toBeDefined();
    expect(serve(lane, call(5))).toBeUndefined();
  });

  test("after the transport closed, the transport answers", async () => {
    const lane = await open();
    await lane.transport.close();
    expect(serve(lane, call(1))).toBeUndefined();
  });
});
