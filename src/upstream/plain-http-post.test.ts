import { afterEach, describe, expect, test } from "bun:test";
import {
  type FetchLike,
  type JSONRPCMessage,
  ProtocolError,
  SdkHttpError,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { boundedFetch } from "./bounded-fetch.ts";
import { createCallTags } from "./call-tags.ts";
import { plainPostFor, readSse } from "./plain-http-post.ts";

/**
 * The plain POST held to the SDK transport's own send: a server on 127.0.0.1 answers each POST
 * with what a test gives it (an SSE stream in chunks, a JSON body, a refusal), and the messages
 * the transport's `onmessage` gets, and what its `onerror` is told, must be the same either way.
 * The SDK's side has the fetch serve gives it (call-tags.ts over bounded-fetch.ts).
 */

const MAX = 2_000;
const CALL = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo" } } as const;
const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

type Answer = { status?: number; type?: string; chunks: string[] };

/** A server that answers every POST with `answer`, and counts the requests it got by method. */
function serve(answer: () => Answer) {
  const seen: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      seen.push(`${request.method} ${request.headers.get("last-event-id") ?? ""}`.trim());
      if (request.method !== "POST") return new Response(null, { status: 405 });
      await request.text();
      const { status = 200, type = "text/event-stream", chunks } = answer();
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          for (const chunk of chunks) {
            controller.enqueue(encoder.encode(chunk));
            await Bun.sleep(1);
          }
          controller.close();
        },
      });
      return new Response(body, { status, headers: { "content-type": type } });
    },
  });
  stops.push(() => server.stop(true));
  return { url: new URL(`http://127.0.0.1:${server.port}/mcp`), seen };
}

/** A transport as serve makes one, and what its onmessage and onerror are told. */
async function transportTo(url: URL) {
  const raw: FetchLike = (to, init) => fetch(to, init);
  const tags = createCallTags(boundedFetch(raw, MAX));
  const posted: [unknown, string][] = [];
  const transport = new StreamableHTTPClientTransport(url, { fetch: tags.fetch });
  const messages: JSONRPCMessage[] = [];
  const errors: string[] = [];
  transport.onmessage = (message) => void messages.push(message);
  transport.onerror = (error) => void errors.push(error.message);
  await transport.start();
  tags.note("t", CALL.id);
  const post = plainPostFor(transport, {
    given: tags.fetch,
    base: raw,
    maxBytes: MAX,
    notePosted: (id, postedId) => {
      posted.push([id, postedId]);
      tags.notePosted(id, postedId);
    },
  })!;
  stops.push(() => void transport.close());
  return { transport, tags, post, messages, errors, posted };
}

/** What each way delivers for the same answer: [plain, SDK]. */
async function bothWays(answer: () => Answer) {
  const server = serve(answer);
  const plain = await transportTo(server.url);
  const sdk = await transportTo(server.url);
  const outcome = async (sending: Promise<void>, side: Awaited<ReturnType<typeof transportTo>>) => {
    const thrown = await sending.then(
      () => undefined,
      (error: Error) => error,
    );
    // The stream is read after the send returns: until its response came (or a moment passed).
    for (
      let waited = 0;
      !thrown && waited < 1_500 && !side.messages.some((m) => !("method" in m));
      waited += 10
    )
      await Bun.sleep(10);
    return { thrown, messages: side.messages, errors: side.errors, tags: side.tags };
  };
  return {
    plain: await outcome(plain.post(structuredClone(CALL) as never), plain),
    sdk: await outcome(sdk.transport.send(structuredClone(CALL) as never), sdk),
    posted: plain.posted,
    seen: server.seen,
  };
}

const event = (message: unknown, eol = "\n") =>
  `event: message${eol}data: ${JSON.stringify(message)}${eol}${eol}`;
const result = (id: number, text: string) => ({
  result: { content: [{ type: "text", text }] },
  jsonrpc: "2.0",
  id,
});
const sampling = {
  jsonrpc: "2.0",
  id: 3,
  method: "sampling/createMessage",
  params: { messages: [], maxTokens: 1 },
};
const progress = {
  jsonrpc: "2.0",
  method: "notifications/progress",
  params: { progressToken: 7, progress: 1 },
};

describe("a plain POST delivers what the SDK transport's send delivers", () => {
  test("one event", async () => {
    const { plain, sdk } = await bothWays(() => ({ chunks: [event(result(7, "hi"))] }));
    expect(plain.messages).toEqual([result(7, "hi")] as never);
    expect(plain.messages).toEqual(sdk.messages);
    expect(plain.errors).toEqual(sdk.errors);
  });

  test("a notification, a server request and the response, CRLF, one byte at a time; the request noted under the call", async () => {
    const text = [
      event(progress, "\r\n"),
      `: a comment\r\n`,
      event(sampling, "\r\n"),
      event(result(7, "done"), "\r\n"),
    ].join("");
    const { plain, sdk, posted } = await bothWays(() => ({ chunks: [...text] }));
    expect(plain.messages).toEqual([progress, sampling, result(7, "done")] as never);
    expect(plain.messages).toEqual(sdk.messages);
    expect(posted).toEqual([[3, "7"]]);
    expect(plain.tags.callOf({}, 3)).toBe("t");
    expect(sdk.tags.callOf({}, 3)).toBe("t");
  });

  test("an event over the limit: a response's error in its place, and the stream goes on", async () => {
    const big = result(7, "x".repeat(MAX * 2));
    const after = {
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "info", data: "after" },
    };
    const { plain, sdk } = await bothWays(() => ({
      chunks: [event(big).slice(0, 900), event(big).slice(900), event(after)],
    }));
    expect(plain.messages).toHaveLength(2);
    expect((plain.messages[0] as { error: { code: number } }).error.code).toBe(-32010);
    expect(plain.messages).toEqual(sdk.messages);
  });

  test("a JSON body; one over the limit fails as the SDK's does", async () => {
    const { plain, sdk } = await bothWays(() => ({
      type: "application/json",
      chunks: [JSON.stringify(result(7, "json"))],
    }));
    expect(plain.messages).toEqual([result(7, "json")] as never);
    expect(plain.messages).toEqual(sdk.messages);
    const large = await bothWays(() => ({
      type: "application/json",
      chunks: [JSON.stringify(result(7, "y".repeat(MAX * 2)))],
    }));
    expect(large.plain.thrown).toBeInstanceOf(ProtocolError);
    expect(large.plain.thrown?.message).toBe(large.sdk.thrown?.message);
    expect(large.plain.messages).toEqual([]);
  });

  test("a refusal is the SDK's error, with the server's text; a 401 goes to the SDK's auth and its post", async () => {
    const { plain, sdk } = await bothWays(() => ({ status: 500, type: "text/plain", chunks: ["it broke"] }));
    expect(plain.thrown).toBeInstanceOf(SdkHttpError);
    expect(plain.thrown?.message).toBe(sdk.thrown!.message);
    expect(plain.errors).toEqual(sdk.errors);
    const unauthorized = await bothWays(() => ({ status: 401, type: "text/plain", chunks: ["log in"] }));
    expect(unauthorized.plain.thrown?.constructor).toBe(unauthorized.sdk.thrown!.constructor);
    // The plain post, then the SDK's own post (no provider: it gives up), then the SDK's way's one.
    expect(unauthorized.seen).toEqual(["POST", "POST", "POST"]);
  });

  test("events with ids that end before the response are resumed by the transport", async () => {
    const { seen } = await bothWays(() => ({ chunks: [`id: e1\ndata: \n\n`, `id: e2\n${event(progress)}`] }));
    // Each way: its POST, then (after the transport's reconnection delay) a GET resuming after the last event.
    for (
      let waited = 0;
      waited < 10_000 && seen.filter((request) => request === "GET e2").length < 2;
      waited += 50
    )
      await Bun.sleep(50);
    expect(seen.filter((request) => request === "GET e2")).toHaveLength(2);
  });
});

describe("readSse", () => {
  const read = async (chunks: string[], max = MAX) => {
    const got: unknown[] = [];
    const encoder = new TextEncoder();
    await readSse(
      new ReadableStream({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
          controller.close();
        },
      }),
      max,
      {
        event: (e) => void got.push(e),
        oversized: (head, tail, bytes) => void got.push({ head, tail, bytes }),
      },
    );
    return got;
  };

  test("frames events as the SSE spec does", async () => {
    expect(
      await read([
        "\uFEFFdata: a\rdata:b\r\n",
        "event: x\nid: 1\nretry: 50\n\n",
        "data: end-without-blank-line",
      ]),
    ).toEqual([{ type: "x", data: "a\nb", id: "1", retry: 50 }]);
  });

  test("an event over the limit is told by its edges, not held", async () => {
    const [over] = (await read(
      [`data: {"jsonrpc":"2.0","id":9,"result":{"t":"${"z".repeat(100)}"}}\n\n`],
      40,
    )) as {
      head: string;
      tail: string;
      bytes: number;
    }[];
    expect(over!.head.startsWith('{"jsonrpc":"2.0","id":9')).toBe(true);
    expect(over!.tail.endsWith('"}}')).toBe(true);
    expect(over!.bytes).toBeGreaterThan(100);
  });
});
