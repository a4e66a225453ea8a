import { readFileSync } from "node:fs";

/**
 * Model files embedded in the binary (onnxruntime's wasm, the built-in encoder's weights) are
 * packed by the build (scripts/pack-embedded.ts) and unpacked here when their embedder loads,
 * never before: zstd, and for arrays of 4-byte numbers the bytes split into planes first (all
 * first bytes, then all second bytes, …), which lets the exponents compress. A packed file starts
 * with MAGIC, so the same read serves the binary (packed files) and a run from source (the
 * packages' own files).
 */
const MAGIC = new TextEncoder().encode("mcpproxy-packed\n");
const HEADER = MAGIC.length + 1;

export type Planes = 1 | 4;

/** `bytes` packed: MAGIC, the plane width, then one zstd frame. */
export function packBytes(bytes: Uint8Array, planes: Planes, level: number): Uint8Array {
  const body = Bun.zstdCompressSync(planes === 1 ? bytes : splitPlanes(bytes, planes), { level });
  const packed = new Uint8Array(HEADER + body.length);
  packed.set(MAGIC);
  packed[MAGIC.length] = planes;
  packed.set(body, HEADER);
  return packed;
}

export function isPacked(bytes: Uint8Array): boolean {
  return bytes.length >= HEADER && MAGIC.every((byte, at) => bytes[at] === byte);
}

/** The original bytes of a packed file; any other file as it is. */
export function unpackBytes(bytes: Uint8Array): Uint8Array {
  if (!isPacked(bytes)) return bytes;
  const planes = bytes[MAGIC.length];
  if (planes !== 1 && planes !== 4) throw new Error(`a packed file with ${planes} byte planes`);
  const body = Bun.zstdDecompressSync(bytes.subarray(HEADER));
  return planes === 1 ? body : joinPlanes4(body);
}

/** An embedded file's bytes, unpacked when the build packed it. */
export function readEmbeddedFile(path: string): Uint8Array {
  return unpackBytes(readFileSync(path));
}

/** Plane p holds byte p of every `width`-byte element; a tail shorter than one element stays last. */
function splitPlanes(bytes: Uint8Array, width: number): Uint8Array {
  const count = Math.floor(bytes.length / width);
  const out = new Uint8Array(bytes.length);
  for (let plane = 0; plane < width; plane++) {
    const base = plane * count;
    for (let i = 0; i < count; i++) out[base + i] = bytes[i * width + plane]!;
  }
  out.set(bytes.subarray(count * width), count * width);
  return out;
}

/**
 * splitPlanes(bytes, 4) undone a 4-byte word at a time (twice as fast as byte by byte on the first,
 * not yet optimized run, which is the one that counts here). Words are little-endian on every
 * platform Bun runs on (x64, arm64).
 */
function joinPlanes4(bytes: Uint8Array): Uint8Array {
  const count = bytes.length >>> 2;
  const out = new Uint8Array(bytes.length);
  const words = new Uint32Array(out.buffer, 0, count);
  const [second, third, fourth] = [count, 2 * count, 3 * count];
  for (let i = 0; i < count; i++) {
    words[i] = bytes[i]! | (bytes[second + i]! << 8) | (bytes[third + i]! << 16) | (bytes[fourth + i]! << 24);
  }
  out.set(bytes.subarray(count * 4), count * 4);
  return out;
}
