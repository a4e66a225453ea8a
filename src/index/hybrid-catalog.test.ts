import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../log.ts";
import { type Embedder, l2Normalize } from "./embedders/embedder.ts";
import { openToolCatalog } from "./tool-catalog.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-hybrid-"));
  dirs.push(dir);
  return dir;
}

/** A deterministic bag-of-words embedder that counts what it embeds; `synonyms` maps words onto one axis. */
function countingEmbedder(id: string, synonyms: Record<string, string> = {}) {
  const embedded: string[] = [];
  const embedder: Embedder = {
    id,
    dimensions: 32,
    async embed(texts) {
      embedded.push(...texts);
      return texts.map((text) => {
        const vector = new Float32Array(32);
        for (const raw of text.toLowerCase().match(/[a-z]+/g) ?? []) {
          const word = synonyms[raw] ?? raw;
          let hash = 7;
          for (const ch of word) hash = (hash * 31 + ch.charCodeAt(0)) % 32;
          vector[hash]! += 1;
        }
        return l2Normalize(vector);
      });
    },
  };
  return { embedder, embedded };
}

/** The embedder, held until `release` is called: tools stay without vectors until then. */
function gated(inner: Embedder) {
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const embedder: Embedder = {
    ...inner,
    async embed(texts) {
      await gate;
      return inner.embed(texts);
    },
  };
  return { embedder, release };
}

/** An embedder whose model is gone: every call fails. */
const failing: Embedder = {
  id: "broken",
  dimensions: 32,
  embed: async () => {
    throw new Error("model gone");
  },
};

const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: "object" } });
const open = (dataDir: string, embedder: Embedder) =>
  openToolCatalog({ dataDir, toolNameLimit: 60, reservedNames: new Set(), logger: silentLogger, embedder });

describe("hybrid catalog (BM25 + vectors)", () => {
  test("embeds only new and changed tools, and keeps vectors across restarts", async () => {
    const dataDir = tempDir();
    const first = countingEmbedder("bow");
    let catalog = await open(dataDir, first.embedder);
    await catalog.syncServer("mail", [
      tool("send_email", "Send an email"),
      tool("list_inbox", "List the inbox"),
    ]);
    await catalog.whenEmbedded();
    expect(first.embedded).toHaveLength(2);
    await catalog.syncServer("mail", [
      tool("send_email", "Send an email now"),
      tool("list_inbox", "List the inbox"),
    ]);
    await catalog.whenEmbedded();
    expect(first.embedded).toHaveLength(3);
    await catalog.persist();
    await catalog.close();

    const second = countingEmbedder("bow");
    catalog = await open(dataDir, second.embedder);
    expect(second.embedded).toEqual([]);
    expect((await catalog.search("send email", 1))[0]?.tool.name).toBe("mail__send_email");
    await catalog.close();
  });

  test("a different embedder re-embeds every tool", async () => {
    const dataDir = tempDir();
    let catalog = await open(dataDir, countingEmbedder("model-a").embedder);
    await catalog.syncServer("mail", [
      tool("send_email", "Send an email"),
      tool("list_inbox", "List the inbox"),
    ]);
    await catalog.close();
    const other = countingEmbedder("model-b");
    catalog = await open(dataDir, other.embedder);
    await catalog.whenEmbedded();
    expect(other.embedded).toHaveLength(2);
    await catalog.close();
  });

  test("the vector side finds a tool that shares no word with the query", async () => {
    const { embedder } = countingEmbedder("syn", { dispatch: "send", letter: "email", mail: "email" });
    const catalog = await openToolCatalog({
      dataDir: tempDir(),
      toolNameLimit: 60,
      reservedNames: new Set(),
      logger: silentLogger,
      embedder,
      vectorWeight: 0.5,
    });
    await catalog.syncServer("post", [
      tool("send_email", "Send an email"),
      tool("delete_file", "Delete a file"),
    ]);
    await catalog.whenEmbedded();
    const hits = await catalog.search("dispatch letter", 2);
    expect(hits[0]?.tool.name).toBe("post__send_email");
    expect(hits[0]!.score).toBeGreaterThan(0);
    expect(hits[0]!.score).toBeLessThanOrEqual(1);
    await catalog.close();
  });

  test("several requests are embedded in one call and each gets the list it would get alone", async () => {
    const counting = countingEmbedder("syn", { dispatch: "send", letter: "email", erase: "delete" });
    const calls: number[] = [];
    const embedder: Embedder = {
      ...counting.embedder,
      embed: (texts) => {
        calls.push(texts.length);
        return counting.embedder.embed(texts);
      },
    };
    const catalog = await open(tempDir(), embedder);
    await catalog.syncServer("post", [
      tool("send_email", "Send an email"),
      tool("delete_file", "Delete a file"),
      tool("list_files", "List the files of a folder"),
    ]);
    await catalog.whenEmbedded();
    const requests = [
      "dispatch letter",
      "erase a file. Then list the files of the folder",
      "dispatch letter",
    ];
    calls.length = 0;
    const batch = await catalog.searchAllWithHeld(requests, 3);
    // The requests and the second one's two steps, the repeated request once: one call of the model.
    expect(calls).toEqual([4]);
    const singles = [];
    for (const request of requests) singles.push(await catalog.searchWithHeld(request, 3));
    const names = (found: typeof batch) =>
      found.map(({ hits }) => hits.map((hit) => [hit.tool.name, hit.score]));
    expect(names(batch)).toEqual(names(singles));
    expect(batch[0]!.hits[0]?.tool.name).toBe("post__send_email");
    expect(batch[1]!.hits.map((hit) => hit.tool.name)).toContain("post__list_files");
    await catalog.close();
  });

  test("relevance is judged per fused ranking: kept whole when one hit is relevant, else nothing", async () => {
    const { embedder } = countingEmbedder("bow");
    const catalog = await open(tempDir(), embedder);
    await catalog.syncServer("mail", [
      tool("send_email", "Send an email"),
      tool("list_inbox", "List the inbox"),
    ]);
    await catalog.whenEmbedded();
    const hits = await catalog.search("send email", 5, 0.05);
    expect(hits.map((hit) => hit.tool.name)).toEqual(["mail__send_email", "mail__list_inbox"]);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
    // No word in common and a cosine below RELEVANT_COSINE: nothing, as without vectors.
    expect(await catalog.search("giraffe", 5, 0.05)).toEqual([]);
    expect((await catalog.search("giraffe", 5, 0)).length).toBe(2);
    await catalog.close();
  });

  test("answers lexically while the tools are embedded in the background, and fused once they are", async () => {
    const { embedder: inner, embedded } = countingEmbedder("syn", { dispatch: "send", letter: "email" });
    const { embedder, release } = gated(inner);
    const catalog = await open(tempDir(), embedder);
    // The sync returns with the lexical index updated; the vectors wait behind the gate.
    await catalog.syncServer("post", [
      tool("send_email", "Send an email"),
      tool("delete_file", "Delete a file"),
    ]);
    expect(embedded).toEqual([]);
    const lexical = await catalog.search("send email", 2);
    expect(lexical.map((hit) => hit.tool.name)).toEqual(["post__send_email"]);
    expect(await catalog.search("dispatch letter", 2)).toEqual([]);
    expect(embedded).toEqual([]); // no query was embedded either

    release();
    await catalog.whenEmbedded();
    const fused = await catalog.search("dispatch letter", 2);
    expect(fused[0]?.tool.name).toBe("post__send_email");
    await catalog.close();
  });

  test("a tool changed while its batch is embedded keeps the newer definition's vector", async () => {
    const { embedder: inner, embedded } = countingEmbedder("bow");
    const { embedder, release } = gated(inner);
    const dataDir = tempDir();
    let catalog = await open(dataDir, embedder);
    await catalog.syncServer("mail", [tool("send_email", "Send an email")]);
    await catalog.syncServer("mail", [tool("send_email", "Send a letter")]);
    release();
    await catalog.whenEmbedded();
    expect(embedded.filter((text) => text.includes("letter"))).toHaveLength(1);
    await catalog.close();
    // Stored under the newer hash: a restart embeds nothing.
    const again = countingEmbedder("bow");
    catalog = await open(dataDir, again.embedder);
    await catalog.whenEmbedded();
    expect(again.embedded).toEqual([]);
    await catalog.close();
  });

  test("an embedder that fails leaves search lexical and says so to whoever waits", async () => {
    const catalog = await open(tempDir(), failing);
    await catalog.syncServer("mail", [tool("send_email", "Send an email")]);
    await expect(catalog.whenEmbedded()).rejects.toThrow("model gone");
    expect((await catalog.search("send email", 1))[0]?.tool.name).toBe("mail__send_email");
    await catalog.close();
  });
});

describe("auto search (BM25, the vectors for the requests it answers weakly)", () => {
  const openAuto = (dataDir: string, embedder: Embedder, fallbackWait?: number) =>
    openToolCatalog({
      dataDir,
      toolNameLimit: 60,
      reservedNames: new Set(),
      logger: silentLogger,
      embedder,
      vectorUse: "fallback",
      ...(fallbackWait === undefined ? {} : { fallbackWait }),
    });
  const names = (hits: readonly { tool: { name: string } }[]) => hits.map((hit) => hit.tool.name);
  const POST = [tool("send_email", "Send an email"), tool("delete_file", "Delete a file")];

  test("embeds nothing until a request's words miss; then the tools, and that request is fused", async () => {
    const { embedder, embedded } = countingEmbedder("syn", { dispatch: "send", letter: "email" });
    const catalog = await openAuto(tempDir(), embedder);
    // Asked before any server listed its tools: nothing to embed, and nothing started for later.
    expect(await catalog.search("dispatch letter", 2, 0.05)).toEqual([]);
    await catalog.syncServer("post", POST);
    await catalog.whenEmbedded(); // nothing asked for the vectors: nothing to wait for
    expect(names(await catalog.search("send email", 2))).toEqual(["post__send_email"]);
    expect(embedded).toEqual([]);

    // No word in common: the tools are embedded (two of them, within the wait), then the request.
    expect(names(await catalog.search("dispatch letter", 2, 0.05))[0]).toBe("post__send_email");
    expect(embedded).toHaveLength(3);
    expect(embedded[2]).toBe("dispatch letter");

    // A strong request stays lexical and embeds nothing; a tool added now is embedded as it comes.
    expect(names(await catalog.search("delete file", 1))).toEqual(["post__delete_file"]);
    expect(embedded).toHaveLength(3);
    await catalog.syncServer("post", [...POST, tool("list_files", "List the files of a folder")]);
    await catalog.whenEmbedded();
    expect(embedded).toHaveLength(4);
    await catalog.close();
  });

  test("the stored vectors are read when a request first needs them, and only new tools embedded", async () => {
    const dataDir = tempDir();
    const synonyms = { dispatch: "send", letter: "email" };
    const first = countingEmbedder("syn", synonyms);
    let catalog = await openAuto(dataDir, first.embedder);
    await catalog.syncServer("post", POST);
    await catalog.search("dispatch letter", 1);
    expect(first.embedded).toHaveLength(3);
    await catalog.persist();
    await catalog.close();

    const again = countingEmbedder("syn", synonyms);
    catalog = await openAuto(dataDir, again.embedder);
    await catalog.syncServer("post", [...POST, tool("list_files", "List the files of a folder")]);
    expect(again.embedded).toEqual([]);
    expect(names(await catalog.search("dispatch letter", 1, 0.05))).toEqual(["post__send_email"]);
    expect(again.embedded).toEqual([
      expect.stringContaining("List the files of a folder"),
      "dispatch letter",
    ]);
    await catalog.close();
  });

  test("a weak ranking is fused, a strong one kept as BM25 ranks it", async () => {
    const { embedder } = countingEmbedder("syn", { dispatch: "send", letter: "email", mail: "email" });
    const auto = await openAuto(tempDir(), embedder);
    const lexical = await openToolCatalog({
      dataDir: tempDir(),
      toolNameLimit: 60,
      reservedNames: new Set(),
      logger: silentLogger,
    });
    for (const catalog of [auto, lexical]) await catalog.syncServer("post", POST);
    const scores = async (catalog: typeof auto, query: string) =>
      (await catalog.search(query, 2, 0.05)).map((hit) => [hit.tool.name, hit.score]);
    expect(await scores(auto, "send an email to the team")).toEqual(
      await scores(lexical, "send an email to the team"),
    );
    expect(await scores(lexical, "dispatch a letter")).toEqual([]);
    expect((await scores(auto, "dispatch a letter"))[0]?.[0]).toBe("post__send_email");
    // Unlike every tool in words and vector: nothing, as in lexical.
    expect(await scores(auto, "giraffe")).toEqual([]);
    await auto.close();
    await lexical.close();
  });

  test("with more tools waiting than it waits for, the first weak request is lexical and the next fused", async () => {
    const { embedder: inner, embedded } = countingEmbedder("syn", { dispatch: "send", letter: "email" });
    const { embedder, release } = gated(inner);
    const catalog = await openAuto(tempDir(), embedder, 1);
    await catalog.syncServer("post", POST);
    expect(await catalog.search("dispatch letter", 2, 0.05)).toEqual([]);
    release();
    await catalog.whenEmbedded();
    expect(embedded).toHaveLength(2); // the tools, started by the first request; no request yet
    expect(names(await catalog.search("dispatch letter", 2, 0.05))[0]).toBe("post__send_email");
    await catalog.close();
  });

  test("the weak steps of one request are embedded in one call", async () => {
    const counting = countingEmbedder("syn", { dispatch: "send", letter: "email", erase: "delete" });
    const calls: string[][] = [];
    const embedder: Embedder = {
      ...counting.embedder,
      embed: (texts) => {
        calls.push([...texts]);
        return counting.embedder.embed(texts);
      },
    };
    const catalog = await openAuto(tempDir(), embedder);
    await catalog.syncServer("post", [...POST, tool("list_files", "List the files of a folder")]);
    await catalog.search("dispatch letter", 3); // embeds the tools
    calls.length = 0;
    const hits = names(
      await catalog.search("Erase the draft. Then dispatch the letter. Finally list the files", 5),
    );
    expect(hits).toEqual(
      expect.arrayContaining(["post__delete_file", "post__send_email", "post__list_files"]),
    );
    // The whole request and its third step have their words; the two weak steps go in one call.
    expect(calls).toEqual([["Erase the draft.", "dispatch the letter."]]);
    await catalog.close();
  });

  test("a long request is never fused, so a weak one loads nothing", async () => {
    const { embedder, embedded } = countingEmbedder("syn", { dispatch: "send", letter: "email" });
    const catalog = await openAuto(tempDir(), embedder);
    await catalog.syncServer("post", POST);
    // Thirteen content words and no step: past the 12 that are fused.
    const long =
      "dispatch this letter quickly to my colleague abroad tomorrow morning using priority courier service with signed tracking";
    expect(await catalog.search(long, 2, 0.05)).toEqual([]);
    expect(embedded).toEqual([]);
    await catalog.close();
  });

  test("an encoder that fails leaves the request lexical and the search answering", async () => {
    const catalog = await openAuto(tempDir(), failing);
    await catalog.syncServer("mail", [tool("send_email", "Send an email")]);
    expect(await catalog.search("dispatch letter", 1, 0.05)).toEqual([]);
    expect(await catalog.search("dispatch letter", 1, 0.05)).toEqual([]);
    expect(names(await catalog.search("send email", 1))).toEqual(["mail__send_email"]);
    await catalog.close();
  });
});
