import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Embedder } from "./embedder.ts";
import { loadUseLiteEmbedder } from "./use-lite-embedder.ts";
import { USE_LITE_DIMENSIONS, USE_LITE_ID } from "./use-lite-id.ts";

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

/** Texts of very different lengths, so that one call holds texts padded to another's length. */
const TEXTS = [
  "x",
  "remember that my sister's birthday is in May",
  "filesystem list_directory List the files and folders in a directory, with a [FILE] or [DIR] prefix",
  `github create_issue ${"Create a new issue in a GitHub repository, with a title, a body, labels and assignees. ".repeat(6)}`,
  "what's in this folder",
  "",
];

describe("the built-in sentence encoder", () => {
  let encoder: Embedder;
  beforeAll(async () => {
    encoder = await loadUseLiteEmbedder({ workers: 2 });
  }, 60_000);
  afterAll(() => encoder.close?.());

  test("names its cut of a text in its id, so vectors made with another cut are embedded again", () => {
    expect(encoder.id).toBe(USE_LITE_ID);
    expect(encoder.id).toContain("#ids=64");
    // `auto` search opens the catalog with these before the graph is loaded (create-embedder.ts).
    expect(encoder.dimensions).toBe(USE_LITE_DIMENSIONS);
  });

  test("texts embedded together get the vectors they get alone, in their order, of unit length", async () => {
    const together = await encoder.embed(TEXTS);
    expect(together).toHaveLength(TEXTS.length);
    for (const [i, text] of TEXTS.entries()) {
      const [alone] = await encoder.embed([text]);
      expect(cosine(together[i]!, alone!)).toBeGreaterThan(0.9999);
      expect(cosine(together[i]!, together[i]!)).toBeCloseTo(1, 4);
    }
  }, 60_000);

  test("many texts are spread over the workers and each is reported done once", async () => {
    const texts = Array.from({ length: 90 }, (_, i) => `${TEXTS[i % TEXTS.length]} ${i}`);
    const progress: number[] = [];
    const vectors = await encoder.embed(texts, (done) => progress.push(done));
    expect(vectors.every((vector) => vector?.length === 512)).toBe(true);
    expect(progress.at(-1)).toBe(texts.length);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    const [again] = await encoder.embed([texts[17]!]);
    expect(cosine(vectors[17]!, again!)).toBeGreaterThan(0.9999);
  }, 60_000);

  test("a paraphrase is nearer its tool than an unrelated tool", async () => {
    const [request, folder, weather] = await encoder.embed([
      "what's in this folder",
      "list directory: list the files and folders in a directory",
      "get forecast: the weather forecast for a city",
    ]);
    expect(cosine(request!, folder!)).toBeGreaterThan(cosine(request!, weather!));
  }, 60_000);

  test("only a text's first 64 token ids are read", async () => {
    const head = "search issues in a repository by label and state ".repeat(8);
    const [short, long] = await encoder.embed([
      head,
      `${head}${"then delete every file on the disk ".repeat(20)}`,
    ]);
    expect(cosine(short!, long!)).toBeGreaterThan(0.9999);
  }, 60_000);

  test("workers that stopped when idle are started again for the next texts", async () => {
    const resting = await loadUseLiteEmbedder({ workers: 2, idleMs: { spare: 20, last: 100 } });
    try {
      const first = await resting.embed(TEXTS);
      await Bun.sleep(400);
      const again = await resting.embed(TEXTS);
      for (const [i, vector] of first.entries()) expect(cosine(vector, again[i]!)).toBeGreaterThan(0.9999);
    } finally {
      await resting.close?.();
    }
  }, 60_000);

  test("a closed encoder refuses new work with a clear error", async () => {
    const closing = await loadUseLiteEmbedder({ workers: 1 });
    await closing.close?.();
    await expect(closing.embed(["hello"])).rejects.toThrow("closed");
  }, 60_000);
});
