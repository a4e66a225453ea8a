import { describe, expect, test } from "bun:test";
import { seededRandom } from "../tests/helpers.ts";
import { createJsonLineSplitter, idOfTruncatedMessage, type OversizedLine } from "./json-line-splitter.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

function collect(maxLineBytes: number) {
  const lines: string[] = [];
  const oversized: OversizedLine[] = [];
  const splitter = createJsonLineSplitter(
    maxLineBytes,
    (line) => lines.push(line),
    (line) => oversized.push(line),
  );
  return { lines, oversized, splitter };
}

describe("createJsonLineSplitter", () => {
  test("joins lines split across chunks and splits chunks holding several lines", () => {
    const { lines, splitter } = collect(1000);
    splitter.push(bytes('{"a":1}\n{"b"'));
    splitter.push(bytes(":2}\r\n\n"));
    splitter.push(bytes('{"c":3}\n{"d":'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
    expect(splitter.pendingBytes()).toBe(5);
  });

  test("skips a line over the limit without holding it, keeps its ends, and goes on after it", () => {
    const { lines, oversized, splitter } = collect(64);
    const big = `{"jsonrpc":"2.0","id":7,"result":{"text":"${"x".repeat(5000)}"}}`;
    for (let at = 0; at < big.length; at += 100) {
      splitter.push(bytes(big.slice(at, at + 100)));
      expect(splitter.pendingBytes()).toBeLessThanOrEqual(64);
    }
    splitter.push(bytes('\n{"ok":true}\n'));
    expect(lines).toEqual(['{"ok":true}']);
    expect(oversized).toHaveLength(1);
    expect(oversized[0]!.bytes).toBe(big.length);
    expect(oversized[0]!.head.startsWith('{"jsonrpc":"2.0","id":7')).toBe(true);
    expect(oversized[0]!.tail.endsWith('"}}')).toBe(true);
  });

  test("a line of exactly the limit passes", () => {
    const { lines, oversized, splitter } = collect(10);
    splitter.push(bytes("0123456789\n01234567890\n"));
    expect(lines).toEqual(["0123456789"]);
    expect(oversized.map((line) => line.bytes)).toEqual([11]);
  });

  test("random lines in random chunks: each whole line once, as the text splits it", () => {
    const random = seededRandom(11);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const shapes = ['{"a":1}', '{"é":"ü€𝄞"}', "   ", "", "\r", '{"b":2}\r', " x ", "{", "y".repeat(70)];
    for (let round = 0; round < 300; round++) {
      const written = Array.from({ length: 1 + Math.floor(random() * 8) }, () => pick(shapes));
      const text = `${written.join("\n")}\n${pick(["", '{"rest"'])}`;
      const encoded = bytes(text);
      const { lines, oversized, splitter } = collect(64);
      for (let at = 0; at < encoded.length; ) {
        const size = pick([1, 2, 3, 7, 16, 64, 1000]);
        splitter.push(encoded.slice(at, at + size));
        at += size;
      }
      const whole = written.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
      expect(lines).toEqual(whole.filter((line) => line.trim() !== "" && bytes(line).length <= 64));
      expect(oversized.map((line) => line.bytes)).toEqual(
        whole.map((line) => bytes(line).length).filter((length) => length > 64),
      );
    }
  });
});

describe("idOfTruncatedMessage", () => {
  test("reads the id right after jsonrpc at the start, or as the last member", () => {
    expect(idOfTruncatedMessage('{"jsonrpc":"2.0","id":12,"result":{', "")).toBe(12);
    expect(idOfTruncatedMessage('{"result":{"content":[', '"x"}]},"jsonrpc":"2.0","id":"abc-1"}')).toBe(
      "abc-1",
    );
  });

  test("does not trust an id inside the payload", () => {
    expect(idOfTruncatedMessage('{"result":{"id":5,"text":"', 'more"}}')).toBeUndefined();
  });
});
