import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSafetensors } from "./safetensors.ts";

function safetensors(tensors: Record<string, { dtype: string; shape: number[]; bytes: Uint8Array }>): Buffer {
  let offset = 0;
  const header: Record<string, unknown> = {};
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.bytes.length] };
    offset += t.bytes.length;
  }
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([length, json, ...Object.values(tensors).map((t) => Buffer.from(t.bytes))]);
}

describe("loadSafetensors", () => {
  test("decodes F32, F16, I8 and I32 tensors at unaligned offsets", () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpproxy-st-"));
    try {
      const path = join(dir, "model.safetensors");
      writeFileSync(
        path,
        safetensors({
          small: { dtype: "I8", shape: [3], bytes: new Uint8Array(Int8Array.of(-2, 0, 127).buffer) },
          half: {
            dtype: "F16",
            shape: [3],
            bytes: new Uint8Array(Uint16Array.of(0x3c00, 0xc000, 0x3555).buffer),
          },
          full: { dtype: "F32", shape: [2], bytes: new Uint8Array(Float32Array.of(0.5, -1.25).buffer) },
          ids: { dtype: "I32", shape: [2], bytes: new Uint8Array(Int32Array.of(7, -9).buffer) },
        }),
      );
      const tensors = loadSafetensors(path);
      expect([...tensors.get("small")!.data]).toEqual([-2, 0, 127]);
      const half = [...tensors.get("half")!.data];
      expect(half[0]).toBe(1);
      expect(half[1]).toBe(-2);
      expect(half[2]).toBeCloseTo(1 / 3, 3);
      expect([...tensors.get("full")!.data]).toEqual([0.5, -1.25]);
      expect([...tensors.get("ids")!.data]).toEqual([7, -9]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a truncated file is an error, not garbage", () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpproxy-st-"));
    try {
      const path = join(dir, "bad.safetensors");
      writeFileSync(path, Buffer.from([200, 0, 0, 0, 0, 0, 0, 0, 123]));
      expect(() => loadSafetensors(path)).toThrow(/damaged safetensors header/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
