import { describe, expect, test } from "bun:test";
import { isUnreachable, modernHeaders, sseMessages, unreachableMessage, WENT_AWAY } from "./bridge-wire.ts";

const streamOf = (...chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });

describe("what the bridge reads and sends", () => {
  test("a 2026 request's headers come from its body; a name outside plain ASCII is sent in base64", () => {
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "gh__créer", _meta: {} } };
    expect(modernHeaders(call, "2026-07-28")).toEqual({
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": `=?base64?${Buffer.from("gh__créer").toString("base64")}?=`,
    });
    expect(modernHeaders({ ...call, params: { name: "plain" } }, "2026-07-28")["mcp-name"]).toBe("plain");
    expect(modernHeaders({ jsonrpc: "2.0", id: 2, method: "tools/list" }, "2026-07-28")).not.toHaveProperty(
      "mcp-name",
    );
  });

  test("an SSE stream's messages, split anywhere, CRLF or LF, comments and ids skipped", async () => {
    const messages = [];
    for await (const message of sseMessages(
      streamOf(
        ": keep-alive\r\n\r\nid: 1\r\nda",
        'ta: {"jsonrpc":"2.0","method":"a"}\r\n\r\n',
        'data: {"jsonrpc":"2.0",\ndata: "id":3,"result":{}}\n\n',
      ),
    ))
      messages.push(message);
    expect(messages).toEqual([
      { jsonrpc: "2.0", method: "a" },
      { jsonrpc: "2.0", id: 3, result: {} },
    ]);
  });

  test("a refused connection is one the message never reached; a broken one may have run it", () => {
    const refused = Object.assign(new Error("Unable to connect"), { code: "ConnectionRefused" });
    const reset = Object.assign(new Error("The socket connection was closed unexpectedly"), {
      code: "ECONNRESET",
    });
    expect(isUnreachable(refused, "http://127.0.0.1:1/mcp")).toBe(true);
    expect(isUnreachable(reset, "http://127.0.0.1:1/mcp")).toBe(false);
    expect(unreachableMessage(refused)).toContain("mcpproxy start");
    expect(unreachableMessage(reset)).toBe(WENT_AWAY);
  });
});
