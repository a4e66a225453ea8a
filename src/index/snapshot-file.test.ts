import { describe, expect, test } from "bun:test";
import { decodeSnapshot, encodeSnapshot } from "./snapshot-file.ts";

describe("snapshot file", () => {
  test("round-trips JSON with Int32Arrays in it, including views with an offset", () => {
    const backing = Int32Array.of(9, 1, -2, 3, 9);
    const value = {
      a: "text",
      n: 3,
      postings: backing.subarray(1, 4),
      nested: { lengths: Int32Array.of(5) },
    };
    const decoded = decodeSnapshot(encodeSnapshot(value)) as typeof value;
    expect(decoded.a).toBe("text");
    expect([...decoded.postings]).toEqual([1, -2, 3]);
    expect(decoded.postings).toBeInstanceOf(Int32Array);
    expect([...decoded.nested.lengths]).toEqual([5]);
  });

  test("decodes from a buffer that is not 4-byte aligned", () => {
    const encoded = encodeSnapshot({ x: Int32Array.of(7, 8) });
    const shifted = Buffer.alloc(encoded.length + 1);
    encoded.copy(shifted, 1);
    expect([...(decodeSnapshot(shifted.subarray(1)) as { x: Int32Array }).x]).toEqual([7, 8]);
  });

  test("refuses files that are not snapshots, are cut short or have a changed byte", () => {
    expect(() => decodeSnapshot(Buffer.from("{not json"))).toThrow(/not a search-index snapshot/);
    const encoded = encodeSnapshot({ x: Int32Array.of(1, 2, 3) });
    expect(() => decodeSnapshot(encoded.subarray(0, encoded.length - 4))).toThrow(/damaged/);
    const flipped = Buffer.from(encoded);
    flipped[flipped.length - 8]! ^= 0x01;
    expect(() => decodeSnapshot(flipped)).toThrow(/damaged/);
    expect(decodeSnapshot(encoded)).toEqual({ x: Int32Array.of(1, 2, 3) });
  });
});
