import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadSafetensors } from "../../src/index/embedders/safetensors.ts";

/**
 * A static word table's nearest words (bench/experiments/static-table-experiment.ts, `--expand`):
 * for a word of a request, the words of a catalogue whose table rows are closest by cosine. The
 * rows are int8 with one scale per word, so a row's direction is the row itself.
 */
export function tableNeighbours(dir: string, catalogueWords: ReadonlySet<string>) {
  const table = loadSafetensors(join(dir, "model.safetensors")).get("embeddings")!;
  const [, dims] = table.shape as [number, number];
  const words = readFileSync(join(dir, "vocab.txt"), "utf8").split("\n");
  const rowOf = new Map(words.map((word, row) => [word, row]));
  const unit = (row: number) => {
    const out = new Float32Array(dims);
    let norm = 0;
    for (let d = 0; d < dims; d++) {
      out[d] = table.data[row * dims + d]!;
      norm += out[d]! ** 2;
    }
    norm = Math.sqrt(norm) || 1;
    for (let d = 0; d < dims; d++) out[d]! /= norm;
    return out;
  };
  const candidates = [...catalogueWords].flatMap((word) => {
    const row = rowOf.get(word);
    return row === undefined ? [] : [{ word, vector: unit(row) }];
  });
  const cache = new Map<string, string[]>();
  /** Up to `count` catalogue words at a cosine of at least `least`, nearest first, the word itself left out. */
  return (word: string, count: number, least: number): string[] => {
    const key = `${word} ${count} ${least}`;
    const known = cache.get(key);
    if (known) return known;
    const row = rowOf.get(word);
    let found: string[] = [];
    if (row !== undefined) {
      const query = unit(row);
      found = candidates
        .map(({ word: other, vector }) => {
          let dot = 0;
          for (let d = 0; d < dims; d++) dot += vector[d]! * query[d]!;
          return { other, dot };
        })
        .filter(({ other, dot }) => other !== word && dot >= least)
        .sort((a, b) => b.dot - a.dot)
        .slice(0, count)
        .map(({ other }) => other);
    }
    cache.set(key, found);
    return found;
  };
}
