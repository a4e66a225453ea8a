import { describe, expect, test } from "bun:test";
import { CALL_META_KEY, createCallTags, watchRequests } from "./call-tags.ts";

/** Runs `text` through the watcher in chunks of `size` bytes; resolves to the ids found and the bytes out. */
async function watch(text: string, size: number) {
  const ids: unknown[] = [];
  const bytes = new TextEncoder().encode(text);
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.slice(at, at + size));
  const out = new Response(
    new ReadableStream({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    }).pipeThrough(watchRequests((id) => ids.push(id))),
  );
  return { ids, text: await out.text() };
}

const event = (message: unknown, eol = "\n") =>
  `event: message${eol}data: ${JSON.stringify(message)}${eol}${eol}`;

describe("watchRequests", () => {
  const sampling = {
    method: "sampling/createMessage",
    params: { messages: [{ role: "user", content: { type: "text", text: "x".repeat(2000) } }], maxTokens: 5 },
    jsonrpc: "2.0",
    id: 7,
  };
  const result = {
    jsonrpc: "2.0",
    id: 3,
    result: { content: [{ type: "text", text: "y".repeat(100_000) }] },
  };
  const stream = `: ping\n\n${event(result)}${event({ jsonrpc: "2.0", id: "r1", method: "roots/list" }, "\r\n")}${event(sampling)}`;

  for (const size of [1, 7, 64, 4096, 1_000_000]) {
    test(`finds each request's id, whatever the chunks (${size} bytes), and passes every byte on`, async () => {
      const seen = await watch(stream, size);
      expect(seen.ids).toEqual(["r1", 7]);
      expect(seen.text).toBe(stream);
    });
  }

  test("a result that quotes a request's method is not taken for one", async () => {
    const quoting = { jsonrpc: "2.0", id: 4, result: { text: '"method": "sampling/createMessage"' } };
    expect((await watch(event(quoting), 13)).ids).toEqual([]);
  });
});

describe("createCallTags", () => {
  test("a tagged call leaves without its tag; a request naming its progress token finds it", async () => {
    const sent: unknown[] = [];
    const transport = {
      start: async () => {},
      close: async () => {},
      send: async (message: unknown) => void sent.push(message),
    };
    const tags = createCallTags();
    tags.tagCalls(transport as never);
    await transport.send({
      jsonrpc: "2.0",
      id: 12,
      method: "tools/call",
      params: { name: "t", _meta: { [CALL_META_KEY]: "call-a", progressToken: 12 } },
    });
    expect(sent).toEqual([
      { jsonrpc: "2.0", id: 12, method: "tools/call", params: { name: "t", _meta: { progressToken: 12 } } },
    ]);
    expect(tags.callOf({ params: { _meta: { progressToken: 12 } } }, 99)).toBe("call-a");
    expect(tags.callOf({ params: {} }, 99)).toBeUndefined();
    tags.forget("call-a");
    expect(tags.callOf({ params: { _meta: { progressToken: 12 } } }, 99)).toBeUndefined();
  });

  test("a call noted by its id, sent untagged, is found as a tagged one is", () => {
    const tags = createCallTags();
    tags.note("call-b", 13);
    expect(tags.callOf({ params: { _meta: { progressToken: 13 } } }, 99)).toBe("call-b");
    expect(tags.callOf({ params: { _meta: { progressToken: "13" } } }, 99)).toBe("call-b");
    tags.forget("call-b");
    expect(tags.callOf({ params: { _meta: { progressToken: 13 } } }, 99)).toBeUndefined();
  });

  test("a request on the response stream of a call's POST belongs to that call", async () => {
    const body = event({ jsonrpc: "2.0", id: 5, method: "elicitation/create", params: {} });
    const tags = createCallTags(
      async () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
    );
    const transport = { start: async () => {}, close: async () => {}, send: async (_message: unknown) => {} };
    tags.tagCalls(transport as never);
    await transport.send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "t", _meta: { [CALL_META_KEY]: "call-b" } },
    } as never);
    const response = await tags.fetch("http://127.0.0.1/mcp", {
      method: "POST",
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t" } }),
    });
    expect(await response.text()).toBe(body);
    expect(tags.callOf({}, 5)).toBe("call-b");
    expect(tags.callOf({}, 6)).toBeUndefined();
  });
});
