import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { testModel } from "../../../tests/model-assets.ts";
import { loadStaticEmbedder } from "./static-embedder.ts";

const fixtures = testModel("model2vec-rs-test-fixtures");
const glove = testModel("glove-sif-50k-f16");
const reference = (file: string) => JSON.parse(readFileSync(join(fixtures!, file), "utf8"))[0] as number[];
const LONG = Array(1000).fill("hello").join(" ");

function maxRelativeError(actual: Float32Array, expected: number[]): number {
  let worst = 0;
  expected.forEach((value, i) => {
    worst = Math.max(worst, Math.abs(value - actual[i]!) / Math.max(1e-12, Math.abs(value)));
  });
  return worst;
}

describe.skipIf(!fixtures)("model2vec static models (Python model2vec reference outputs)", () => {
  test.each([
    ["test-model-float32", "embeddings_short.json", "hello world"],
    ["test-model-float32", "embeddings_long.json", LONG],
    ["test-model-vocab-quantized", "embeddings_vocab_quantized.json", LONG],
  ])("%s reproduces %s within 1e-5", async (model, file, text) => {
    const embedder = loadStaticEmbedder(join(fixtures!, model), model);
    const [vector] = await embedder.embed([text]);
    const expected = reference(file);
    expect(embedder.dimensions).toBe(expected.length);
    expect(maxRelativeError(vector!, expected)).toBeLessThan(1e-5);
  });

  test("float16 and int8 tables decode to the float32 model's direction", async () => {
    const expected = reference("embeddings_short.json");
    for (const [model, tolerance] of [
      ["test-model-float16", 1e-3],
      ["test-model-int8", 3e-2],
    ] as const) {
      const [vector] = await loadStaticEmbedder(join(fixtures!, model), model).embed(["hello world"]);
      expect(maxRelativeError(vector!, expected)).toBeLessThan(tolerance);
    }
  });
});

describe.skipIf(!glove)("word-level static table (glove-sif-50k)", () => {
  test("related requests are closer than unrelated ones", async () => {
    const embedder = loadStaticEmbedder(glove!, "glove");
    const [mail, message, file] = await embedder.embed([
      "send an email to my colleague",
      "deliver a mail message",
      "delete a directory on disk",
    ]);
    const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
    expect(embedder.dimensions).toBe(100);
    expect(cosine(mail!, message!)).toBeGreaterThan(cosine(mail!, file!) + 0.1);
  });
});
