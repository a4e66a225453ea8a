import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testModel } from "../../../tests/model-assets.ts";
import { loadOnnxEmbedder } from "./onnx-embedder.ts";

const tinyBert = testModel("tiny-random-bert-onnx");

// Golden values from the model's README: transformers.js feature-extraction, mean pooling,
// normalized; first 4 of 32 dimensions, onnxruntime-web (WASM).
const GOLDEN = {
  fp32: [
    [0.013643, 0.003893, 0.055861, 0.159337],
    [0.092394, 0.016888, 0.275579, 0.181169],
  ],
  q8: [
    [0.012255, 0.002084, 0.056318, 0.158865],
    [0.092661, 0.01556, 0.275406, 0.18121],
  ],
};

describe.skipIf(!tinyBert)("ONNX transformer models through transformers.js on WASM", () => {
  test.each(["fp32", "q8"] as const)("%s matches the reference vectors", async (dtype) => {
    const cacheDir = mkdtempSync(join(tmpdir(), "mcpproxy-onnx-"));
    try {
      const embedder = await loadOnnxEmbedder(
        { model: tinyBert!, cacheDir, allowDownload: false, dtype },
        "tiny",
      );
      const vectors = await embedder.embed(["hello world", "read a file from disk"]);
      expect(embedder.dimensions).toBe(32);
      for (const [row, vector] of vectors.entries()) {
        for (const [i, value] of GOLDEN[dtype][row]!.entries())
          expect(Math.abs(vector[i]! - value)).toBeLessThan(1e-5);
      }
      await embedder.close?.();
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });
});
