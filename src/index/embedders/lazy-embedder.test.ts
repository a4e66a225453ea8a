import { describe, expect, test } from "bun:test";
import { lazyEmbedder } from "./create-embedder.ts";
import type { Embedder } from "./embedder.ts";

/** A model that counts its loads and closes; its vectors are the texts' lengths. */
function counted(failFirst = false) {
  const counts = { loads: 0, closes: 0 };
  const load = async (): Promise<Embedder> => {
    counts.loads++;
    if (failFirst && counts.loads === 1) throw new Error("weights missing");
    return {
      id: "m",
      dimensions: 1,
      embed: async (texts) => texts.map((text) => Float32Array.of(text.length)),
      close: async () => {
        counts.closes++;
      },
    };
  };
  return { counts, load };
}

describe("lazyEmbedder", () => {
  test("loads nothing until the first embed, then once for every call after", async () => {
    const { counts, load } = counted();
    const lazy = lazyEmbedder("m", 1, load);
    expect([lazy.id, lazy.dimensions, counts.loads]).toEqual(["m", 1, 0]);
    const [a, b] = await Promise.all([lazy.embed(["ab"]), lazy.embed(["abc"])]);
    expect([a![0]![0], b![0]![0]]).toEqual([2, 3]);
    expect(counts.loads).toBe(1);
    await lazy.close?.();
    expect(counts.closes).toBe(1);
  });

  test("closing one never loaded loads nothing", async () => {
    const { counts, load } = counted();
    await lazyEmbedder("m", 1, load).close?.();
    expect(counts).toEqual({ loads: 0, closes: 0 });
  });

  test("a failed load fails that call, and the next call loads again", async () => {
    const { counts, load } = counted(true);
    const lazy = lazyEmbedder("m", 1, load);
    await expect(lazy.embed(["x"])).rejects.toThrow("weights missing");
    expect((await lazy.embed(["xy"]))[0]![0]).toBe(2);
    expect(counts.loads).toBe(2);
  });
});
