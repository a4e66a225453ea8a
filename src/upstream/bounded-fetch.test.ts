import { describe, expect, test } from "bun:test";
import { boundEvents } from "./bounded-fetch.ts";

/** Runs `chunks` through boundEvents and returns what comes out, as text. */
async function through(chunks: string[], maxBytes: number): Promise<string> {
  const encoder = new TextEncoder();
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  return new Response(source.pipeThrough(boundEvents(maxBytes))).text();
}

/** The SSE events in `text` as the SDK's parser reads them: type and data. */
function events(text: string): { event: string; data: string }[] {
  return text
    .split(/\r\n\r\n|\n\n|\r\r/)
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const lines = block.split(/\r\n|\n|\r/);
      const event =
        lines
          .findLast((line) => line.startsWith("event:"))
          ?.slice(6)
          .trim() ?? "message";
      const data = lines
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5))
        .join("\n");
      return { event, data };
    });
}

const response = (id: number, text: string) =>
  `event: message\ndata: {"result":{"content":[{"type":"text","text":"${text}"}]},"jsonrpc":"2.0","id":${id}}\n\n`;

describe("boundEvents", () => {
  test("passes events under the limit through byte for byte, however they are split", async () => {
    const stream = `${response(1, "a")}: keep-alive\n\n${response(2, "b".repeat(100))}`;
    expect(await through([stream], 1_000)).toBe(stream);
    expect(await through(stream.split(""), 1_000)).toBe(stream);
    const crlf = stream.replace(/\n/g, "\r\n");
    expect(await through(crlf.match(/[\s\S]{1,7}/g)!, 1_000)).toBe(crlf);
  });

  test("an event over the limit is hidden from the SDK and its request gets an error naming the limit; later events pass", async () => {
    const big = response(7, "x".repeat(5_000));
    for (const chunks of [
      [big + response(8, "after")],
      (big + response(8, "after")).match(/[\s\S]{1,333}/g)!,
    ]) {
      const out = events(await through(chunks, 1_000));
      expect(out.map((event) => event.event)).toEqual(["mcpproxy-dropped", "message", "message"]);
      expect(JSON.parse(out[1]!.data)).toMatchObject({ id: 7, error: { code: -32010 } });
      expect(JSON.parse(out[1]!.data).error.message).toContain("over the limit of 1000 bytes");
      expect(JSON.parse(out[2]!.data)).toMatchObject({ id: 8 });
    }
  });

  test("a request or notification over the limit is dropped without an answer in its place", async () => {
    const request = `data: {"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"x":"${"y".repeat(3_000)}"}}\n\n`;
    const out = events(await through([request, response(4, "ok")], 1_000));
    expect(out.map((event) => event.event)).toEqual(["mcpproxy-dropped", "message"]);
    expect(JSON.parse(out[1]!.data)).toMatchObject({ id: 4 });
  });
});
