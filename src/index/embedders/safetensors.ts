import { readFileSync } from "node:fs";

/**
 * A reader for the safetensors format (8-byte little-endian header length, JSON header, raw
 * little-endian data), for the dtypes static embedding models use. Every tensor comes back as
 * float64 or float32 values, because the embedders only ever read them as numbers.
 */
export interface Tensor {
  dtype: string;
  shape: number[];
  data: Float32Array | Float64Array | Int32Array;
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 0x1f) return fraction ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

function decode(dtype: string, bytes: Uint8Array): Tensor["data"] {
  // Copy into an aligned buffer: a tensor's offset in the file need not be aligned to its width.
  const buffer = bytes.slice().buffer;
  switch (dtype) {
    case "F32":
      return new Float32Array(buffer);
    case "F64":
      return new Float64Array(buffer);
    case "I32":
      return new Int32Array(buffer);
    case "I64": {
      const wide = new BigInt64Array(buffer);
      return Int32Array.from(wide, (value) => Number(value));
    }
    case "F16": {
      const halves = new Uint16Array(buffer);
      const out = new Float32Array(halves.length);
      for (let i = 0; i < halves.length; i++) out[i] = halfToFloat(halves[i]!);
      return out;
    }
    case "I8":
      return Float32Array.from(new Int8Array(buffer));
    case "U8":
      return Float32Array.from(new Uint8Array(buffer));
    default:
      throw new Error(`unsupported tensor dtype ${dtype}`);
  }
}

export function loadSafetensors(path: string): Map<string, Tensor> {
  const file = readFileSync(path);
  if (file.length < 8) throw new Error(`${path} is not a safetensors file (too short)`);
  const headerLength = Number(file.readBigUInt64LE(0));
  if (headerLength <= 0 || 8 + headerLength > file.length)
    throw new Error(`${path} has a damaged safetensors header`);
  const header = JSON.parse(file.subarray(8, 8 + headerLength).toString("utf8")) as Record<
    string,
    { dtype: string; shape: number[]; data_offsets: [number, number] }
  >;
  const base = 8 + headerLength;
  const tensors = new Map<string, Tensor>();
  for (const [name, entry] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    const [start, end] = entry.data_offsets;
    if (base + end > file.length) throw new Error(`${path}: tensor ${name} runs past the end of the file`);
    tensors.set(name, {
      dtype: entry.dtype,
      shape: entry.shape,
      data: decode(entry.dtype, new Uint8Array(file.buffer, file.byteOffset + base + start, end - start)),
    });
  }
  return tensors;
}
