import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isPacked, packBytes, readEmbeddedFile, unpackBytes } from "./packed-file.ts";

/** Float32s like a model's weights (small, mostly alike exponents), then bytes that fit no element. */
function weightsLike(count: number, tail: number): Uint8Array {
  const floats = Float32Array.from({ length: count }, (_, i) => Math.sin(i * 0.37) * 0.05);
  const bytes = new Uint8Array(count * 4 + tail);
  bytes.set(new Uint8Array(floats.buffer));
  for (let i = 0; i < tail; i++) bytes[count * 4 + i] = 200 + i;
  return bytes;
}

describe("packed embedded files", () => {
  test("pack then unpack gives the same bytes, with and without byte planes, tails of every length", () => {
    for (const planes of [1, 4] as const) {
      for (const [count, tail] of [
        [0, 0],
        [0, 3],
        [1, 0],
        [257, 1],
        [1000, 2],
        [4096, 3],
      ] as const) {
        const original = weightsLike(count, tail);
        const packed = packBytes(original, planes, 3);
        expect(isPacked(packed)).toBe(true);
        expect(Buffer.from(unpackBytes(packed)).equals(Buffer.from(original))).toBe(true);
      }
    }
  });

  test("byte planes group the same byte of every element: the packed body is not the elements in order", () => {
    const original = Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9);
    // Level 1 stores these few bytes raw inside the zstd frame, so the planes can be seen there.
    const packed = Buffer.from(packBytes(original, 4, 1));
    expect(packed.includes(Buffer.from([1, 5, 2, 6, 3, 7, 4, 8, 9]))).toBe(true);
    expect(Buffer.from(unpackBytes(packed)).equals(Buffer.from(original))).toBe(true);
  });

  test("a file the build did not pack is read as it is (a run from source reads the packages' files)", () => {
    const wasm = Uint8Array.of(0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0);
    expect(isPacked(wasm)).toBe(false);
    expect(unpackBytes(wasm)).toBe(wasm);
    expect(unpackBytes(new Uint8Array(0)).length).toBe(0);
  });

  test("a truncated packed file or an unknown plane width is an error, not garbage", () => {
    const packed = packBytes(weightsLike(2000, 0), 4, 3);
    expect(() => unpackBytes(packed.subarray(0, packed.length - 10))).toThrow();
    const odd = packed.slice();
    odd[16] = 3;
    expect(() => unpackBytes(odd)).toThrow("3 byte planes");
  });

  test("readEmbeddedFile unpacks a packed file on disk and reads a plain one as it is", () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpproxy-packed-"));
    try {
      const original = weightsLike(500, 1);
      writeFileSync(join(dir, "packed"), packBytes(original, 4, 3));
      writeFileSync(join(dir, "plain"), original);
      expect(Buffer.from(readEmbeddedFile(join(dir, "packed"))).equals(Buffer.from(original))).toBe(true);
      expect(Buffer.from(readEmbeddedFile(join(dir, "plain"))).equals(Buffer.from(original))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
