import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { Embedder } from "../../src/index/embedders/embedder.ts";

/**
 * An embedder's vectors kept on disk by text, for experiments that rank the same texts again and
 * again: the sentence encoder takes minutes for the eval's tools and requests, the ranking seconds.
 * `<file>.json` holds the texts in order, `<file>.f32` their vectors.
 */
export interface EmbeddingCache {
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  save(): void;
}

export function openEmbeddingCache(embedder: Embedder, file: string): EmbeddingCache {
  const dimensions = embedder.dimensions;
  const vectors = new Map<string, Float32Array>();
  if (existsSync(`${file}.json`) && existsSync(`${file}.f32`)) {
    const texts = JSON.parse(readFileSync(`${file}.json`, "utf8")) as string[];
    const bytes = readFileSync(`${file}.f32`);
    const all = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    for (const [i, text] of texts.entries())
      vectors.set(text, all.slice(i * dimensions, (i + 1) * dimensions));
  }
  let added = 0;
  const cache: EmbeddingCache = {
    async embed(texts) {
      const missing = [...new Set(texts.filter((text) => !vectors.has(text)))];
      if (missing.length > 0) {
        const fresh = await embedder.embed(missing, (done) => {
          if (done % 256 === 0) process.stderr.write(`\r  embedded ${done}/${missing.length}`);
        });
        for (const [i, text] of missing.entries()) vectors.set(text, fresh[i]!);
        added += missing.length;
        if (added >= 512) cache.save();
      }
      return texts.map((text) => vectors.get(text)!);
    },
    save() {
      if (added === 0) return;
      const texts = [...vectors.keys()];
      const all = new Float32Array(texts.length * dimensions);
      for (const [i, text] of texts.entries()) all.set(vectors.get(text)!, i * dimensions);
      writeFileSync(`${file}.json`, JSON.stringify(texts));
      writeFileSync(`${file}.f32`, new Uint8Array(all.buffer));
      added = 0;
    },
  };
  return cache;
}
