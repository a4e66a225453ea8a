import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BM25_B, BM25_K1 } from "./bm25-index.ts";
import { createSearchIndex, FIELD_BOOST, loadSearchIndex } from "./search-index.ts";
import type { ToolFields } from "./tool-document.ts";

const fields = (name: string, description: string): ToolFields => ({
  server: "s",
  name,
  description,
  params: "",
});

describe("search index (BM25 over Orama)", () => {
  test("matches whole words only, never prefixes", async () => {
    const index = createSearchIndex();
    await index.add([{ id: "1", fields: fields("deploy", "Deploy an application") }]);
    expect(await index.search("app", 5)).toEqual([]);
    expect(await index.search("a", 5)).toEqual([]);
    expect((await index.search("application", 5)).map((hit) => hit.id)).toEqual(["1"]);
  });

  test("scores with raw term frequency and document frequency counted once per document", async () => {
    const index = createSearchIndex();
    await index.add([
      { id: "a", fields: { server: "", name: "", description: "alpha alpha alpha", params: "" } },
      { id: "b", fields: { server: "", name: "", description: "beta", params: "" } },
    ]);
    const [hit] = await index.search("alpha", 5);
    // text field: a = 3 tokens, b = 1 token; the name field is empty for both.
    const idf = Math.log(1 + (2 - 1 + 0.5) / (1 + 0.5));
    const norm = 1 - BM25_B + (BM25_B * 3) / 2;
    const bm25 = (idf * 3 * (BM25_K1 + 1)) / (3 + BM25_K1 * norm);
    // Scaled by the query's full weight: its idf in each field times the field's boost.
    const nameIdf = Math.log(1 + (2 + 0.5) / 0.5);
    expect(hit?.score).toBeCloseTo(bm25 / (idf * FIELD_BOOST.text + nameIdf * FIELD_BOOST.name), 10);
  });

  test("scores are the 0–1 share of the query a tool matches", async () => {
    const index = createSearchIndex();
    await index.add([
      { id: "1", fields: fields("send_email", "Send an email message to a recipient") },
      { id: "2", fields: fields("create_issue", "Create an issue in a repository") },
      { id: "3", fields: fields("list_files", "List the files of a directory") },
    ]);
    const [full] = await index.search("send email", 5);
    const [half] = await index.search("send pizza", 5);
    expect(full!.score).toBeLessThanOrEqual(1);
    expect(half!.id).toBe("1");
    expect(half!.score).toBeLessThan(full!.score * 0.7);
  });

  test("after removals, scores equal those of an index built without the removed tools", async () => {
    const docs = [
      { id: "1", fields: fields("create_issue", "Create an issue in a repository issue tracker") },
      { id: "2", fields: fields("list_issues", "List the issues of a repository") },
      { id: "3", fields: fields("send_email", "Send an email message") },
    ];
    const edited = createSearchIndex();
    await edited.add(docs);
    await edited.remove(["2"]);
    const fresh = createSearchIndex();
    await fresh.add([docs[0]!, docs[2]!]);
    expect(await edited.search("issue repository email", 5)).toEqual(
      await fresh.search("issue repository email", 5),
    );
    expect(edited.count()).toBe(2);
  });

  test("a saved snapshot loads only for the same generation and answers the same", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpproxy-index-"));
    try {
      const index = createSearchIndex();
      await index.add([{ id: "1", fields: fields("getTinyImage", "Returns a tiny image") }]);
      const path = join(dir, "snapshot.json");
      await index.saveSnapshot(path, 7);
      expect(loadSearchIndex(path, 8)).toBeUndefined();
      const loaded = loadSearchIndex(path, 7)!;
      expect(await loaded.search("tiny image", 5)).toEqual(await index.search("tiny image", 5));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
