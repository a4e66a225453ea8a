import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BM25_K1 } from "./bm25-scoring.ts";
import { createSearchIndex, FIELD_B, FIELD_BOOST, loadSearchIndex } from "./search-index.ts";
import type { ToolFields } from "./tool-document.ts";

const fields = (name: string, description: string): ToolFields => ({
  server: "s",
  name,
  description,
  params: "",
});

describe("search index (BM25F over Orama)", () => {
  test("removes any number of documents before it resolves, so they can be added again at once", async () => {
    const index = createSearchIndex();
    const ids = Array.from({ length: 1_200 }, (_, i) => `t${i}`);
    await index.add(ids.map((id) => ({ id, fields: fields(id, `old wording of ${id}`) })));
    await index.remove(ids);
    expect(index.count()).toBe(0);
    await index.add(ids.map((id) => ({ id, fields: fields(id, `new wording of ${id}`) })));
    await Bun.sleep(20); // what a late batch of an unfinished remove would take away
    expect(index.count()).toBe(ids.length);
    expect((await index.search("t1199 new", 1)).map((hit) => hit.id)).toEqual(["t1199"]);
  });

  test("matches whole words only, never prefixes", async () => {
    const index = createSearchIndex();
    await index.add([{ id: "1", fields: fields("deploy", "Deploy an application") }]);
    expect(await index.search("app", 5)).toEqual([]);
    expect(await index.search("a", 5)).toEqual([]);
    expect((await index.search("application", 5)).map((hit) => hit.id)).toEqual(["1"]);
  });

  test("scores BM25F: raw term frequency, each field normalized by its own length, one saturation", async () => {
    const index = createSearchIndex();
    await index.add([
      { id: "a", fields: { server: "", name: "alpha", description: "alpha alpha alpha", params: "" } },
      { id: "b", fields: { server: "", name: "", description: "beta", params: "" } },
    ]);
    const [hit] = await index.search("alpha", 5);
    // Every word is indexed as written and as its stem, so each field holds twice its word count.
    const norm = (b: number, length: number, average: number) => 1 - b + (b * length) / average;
    const frequency =
      (FIELD_BOOST.name * 1) / norm(FIELD_B.name, 2, 1) +
      (FIELD_BOOST.description * 3) / norm(FIELD_B.description, 6, 4);
    const weights = Object.values(FIELD_BOOST).reduce((a, b) => a + b, 0);
    // The same for "alpha" and "~alpha" (one document holds both): the share of the query's full
    // weight, a match in every field at average length.
    const expected = frequency / (BM25_K1 + frequency) / (weights / (BM25_K1 + weights));
    expect(hit?.score).toBeCloseTo(expected, 10);
  });

  test("a word in the name outweighs the same word in the parameters", async () => {
    const index = createSearchIndex();
    await index.add([
      { id: "param", fields: { server: "s", name: "run", description: "Run a job", params: "tenant" } },
      { id: "name", fields: { server: "s", name: "tenant", description: "Run a job", params: "" } },
    ]);
    expect((await index.search("tenant", 5)).map((hit) => hit.id)).toEqual(["name", "param"]);
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
    // Searched first, so the words' merged postings are cached and must not outlive the change.
    expect(await edited.search("issue repository email", 5)).toHaveLength(3);
    await edited.remove(["2"]);
    const fresh = createSearchIndex();
    await fresh.add([docs[0]!, docs[2]!]);
    expect(await edited.search("issue repository email", 5)).toEqual(
      await fresh.search("issue repository email", 5),
    );
    expect(edited.count()).toBe(2);
    await edited.add([docs[1]!]);
    await fresh.add([docs[1]!]);
    expect(await edited.search("issue repository email", 5)).toEqual(
      await fresh.search("issue repository email", 5),
    );
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
