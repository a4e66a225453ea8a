import { describe, expect, test } from "bun:test";
import { releasedAtEnd } from "./released-at-end.ts";

describe("releasedAtEnd", () => {
  test("releases once, when the body has been read to its end, and passes it through", async () => {
    let releases = 0;
    const response = releasedAtEnd(new Response("hello", { status: 201, headers: { "x-a": "1" } }), () => {
      releases++;
    });
    expect(releases).toBe(0);
    expect(response.status).toBe(201);
    expect(response.headers.get("x-a")).toBe("1");
    expect(await response.text()).toBe("hello");
    expect(releases).toBe(1);
  });

  test("releases once when the client abandons the stream", async () => {
    let releases = 0;
    const endless = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) });
    const response = releasedAtEnd(new Response(endless), () => {
      releases++;
    });
    await response.body?.cancel("gone");
    await response.body?.cancel("again").catch(() => undefined);
    expect(releases).toBe(1);
  });

  test("releases at once a response without a body", () => {
    let releases = 0;
    releasedAtEnd(new Response(null, { status: 202 }), () => {
      releases++;
    });
    expect(releases).toBe(1);
  });
});
