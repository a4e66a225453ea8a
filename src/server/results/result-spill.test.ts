import { describe, expect, test } from "bun:test";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { seededRandom } from "../../../tests/helpers.ts";
import type { Page } from "./result-pages.ts";
import { createResultSpill, lineCount, RESULTS_PREFIX, ResultNotFound, textBound } from "./result-spill.ts";
import { createResultStore } from "./result-store.ts";

function spillWith(settings = { spillBytes: 1_000, headChars: 100, pageChars: 300 }) {
  const store = createResultStore({ ttlMs: 60_000, perScope: 10, scopeBytes: 1e7, totalBytes: 1e8 });
  return createResultSpill(settings, store);
}
const how = { keepStructured: () => false, hasReadTool: true };
const uriIn = (result: CallToolResult) =>
  (result.content.find((block) => block.type === "resource_link") as { uri: string }).uri;

/** Every page of `uri` from 0, concatenated, as a client that follows nextOffset reads it. */
function readAll(spill: ReturnType<typeof spillWith>, scope: string, uri: string, length?: number) {
  let out = "";
  let offset: number | undefined = 0;
  let pages = 0;
  while (offset !== undefined && pages++ < 10_000) {
    const read: { data: string; page: Page } = spill.read(uri, scope, {
      offset,
      ...(length ? { length } : {}),
    })!;
    out += read.data;
    offset = read.page.nextOffset;
  }
  return out;
}

describe("spilling a large result", () => {
  test("a result under the bound is the same object, untouched", () => {
    const spill = spillWith();
    const small: CallToolResult = { content: [{ type: "text", text: "y".repeat(900) }] };
    expect(spill.spill(small, "s", how)).toBe(small);
  });

  test("a large text: its exact head, its sizes, its URI, and pages that rebuild it exactly (surrogate pairs whole)", () => {
    const spill = spillWith();
    // Emoji are surrogate pairs: odd offsets fall inside them, and no page may split one.
    const text = Array.from({ length: 400 }, (_, i) => `line ${i} 😀 é\n`).join("");
    const result = spill.spill({ content: [{ type: "text", text }] }, "s", how);
    expect(result.content[0]).toEqual({ type: "text", text: text.slice(0, 100) });
    const note = (result.content[1] as { text: string }).text;
    expect(note).toContain(
      `${Buffer.byteLength(text)} bytes, ${text.length} characters, ${lineCount(text)} lines`,
    );
    const uri = uriIn(result);
    expect(uri.startsWith(RESULTS_PREFIX)).toBe(true);
    expect(note).toContain(`read_result {"uri": "${uri}", "offset": 100}`);
    expect(readAll(spill, "s", uri)).toBe(text);
    for (const length of [1, 7, 299]) expect(readAll(spill, "s", uri, length)).toBe(text);
    // A page is at most pageChars, whatever is asked.
    expect(spill.read(uri, "s", { length: 10_000 })!.page.length).toBe(300);
    // The range in the URI itself, as resources/read carries it.
    expect(spill.read(`${uri}?offset=100&length=5`, "s")!.data).toBe(text.slice(100, 105));
  });

  test("another scope, an unknown id and a bad range are refused", () => {
    const spill = spillWith();
    const uri = uriIn(spill.spill({ content: [{ type: "text", text: "z".repeat(2_000) }] }, "a", how));
    expect(() => spill.read(uri, "b")).toThrow(ResultNotFound);
    expect(() => spill.read(`${RESULTS_PREFIX}nope`, "a")).toThrow(ResultNotFound);
    expect(() => spill.read(`${uri}?offset=-1`, "a")).toThrow(/offset/);
    expect(() => spill.read(uri, "a", { offset: 2_001 })).toThrow(/past the end/);
    expect(spill.read("mcpproxy://results-server/x", "a")).toBeUndefined();
  });

  test("an image is kept as a blob whose byte pages decode to the original bytes; structuredContent is kept aside", () => {
    const spill = spillWith();
    const bytes = Buffer.from(Array.from({ length: 3_000 }, (_, i) => (i * 31) % 256));
    const structured = { rows: Array.from({ length: 50 }, (_, i) => ({ i, name: `row ${i}` })) };
    const result = spill.spill(
      {
        content: [
          { type: "text", text: "short" },
          { type: "image", data: bytes.toString("base64"), mimeType: "image/png" },
        ],
        structuredContent: structured,
      },
      "s",
      how,
    );
    expect(result.content[0]).toEqual({ type: "text", text: "short" });
    expect(result.structuredContent).toBeUndefined();
    const links = result.content.filter((block) => block.type === "resource_link") as {
      uri: string;
      mimeType: string;
    }[];
    expect(links.map((link) => link.mimeType)).toEqual(["image/png", "application/json"]);
    let rebuilt = Buffer.alloc(0);
    let offset: number | undefined = 0;
    while (offset !== undefined) {
      const read: { data: string; page: Page } = spill.read(links[0]!.uri, "s", { offset })!;
      rebuilt = Buffer.concat([rebuilt, Buffer.from(read.data, "base64")]);
      offset = read.page.nextOffset;
    }
    expect(rebuilt.equals(bytes)).toBe(true);
    // Pages that start and end inside 3-byte groups, and base64 with line breaks as it came.
    const wrapped = bytes.toString("base64").replace(/(.{76})/g, "$1\n");
    const odd = spill.spill({ content: [{ type: "image", data: wrapped, mimeType: "image/png" }] }, "s", how);
    let pieces = Buffer.alloc(0);
    for (let at = 0; at < bytes.length; at += 7) {
      const read = spill.read(uriIn(odd), "s", { offset: at, length: 7 })!;
      pieces = Buffer.concat([pieces, Buffer.from(read.data, "base64")]);
    }
    expect(pieces.equals(bytes)).toBe(true);
    expect(JSON.parse(readAll(spill, "s", links[1]!.uri))).toEqual(structured);
  });

  test("called by its own name with an outputSchema, structuredContent stays", () => {
    const spill = spillWith();
    const structured = { text: "s".repeat(2_000) };
    const result = spill.spill(
      { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured },
      "s",
      { keepStructured: () => true, hasReadTool: false },
    );
    expect(result.structuredContent).toEqual(structured);
    // Without read_result (passthrough), only resources/read is offered.
    expect((result.content[1] as { text: string }).text).not.toContain("read_result");
  });

  test("spillBytes 0 is off", () => {
    const spill = spillWith({ spillBytes: 0, headChars: 10, pageChars: 10 });
    const large: CallToolResult = { content: [{ type: "text", text: "x".repeat(10_000) }] };
    expect(spill.spill(large, "s", how)).toBe(large);
  });
});

describe("the bound that spares a small result its serialization", () => {
  test("is never below the bytes of a text result's JSON, whatever its characters", () => {
    const random = seededRandom(9);
    const alphabet = ["a", '"', "\\", "\n", "\u0001", "é", "€", "😀", "\u2028", "\ud800"];
    for (let i = 0; i < 2000; i++) {
      const blocks = Array.from({ length: Math.floor(random() * 4) }, () => ({
        type: "text" as const,
        text: Array.from(
          { length: Math.floor(random() * 50) },
          () => alphabet[Math.floor(random() * alphabet.length)],
        ).join(""),
      }));
      const result = random() < 0.5 ? { content: blocks } : { content: blocks, isError: random() < 0.5 };
      expect(textBound(result)).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(result)));
    }
  });

  test("says nothing of a result with other parts", () => {
    expect(textBound({ content: [{ type: "text", text: "a" }], structuredContent: { a: 1 } })).toBe(Infinity);
    expect(textBound({ content: [{ type: "image", data: "aGk=", mimeType: "image/png" }] })).toBe(Infinity);
    expect(
      textBound({ content: [{ type: "text", text: "a", _meta: { big: "x".repeat(100) } }] } as never),
    ).toBe(Infinity);
    expect(textBound(JSON.parse('{"content":[],"__proto__":{"x":1}}'))).toBe(Infinity);
  });
});
