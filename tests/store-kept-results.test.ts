import { afterAll, beforeAll, beforeEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { createLogger } from "../src/log.ts";
import { createResultSpill, ResultNotFound } from "../src/server/results/result-spill.ts";
import { createResultStore } from "../src/server/results/result-store.ts";
import { createSharedResults } from "../src/server/results/shared-results.ts";
import { type KeptBounds, keptResultsOf } from "../src/store/postgres/kept-results.ts";
import { openSharedStore, type SharedStore } from "../src/store/shared-store.ts";
import {
  POSTGRES_MISSING,
  postgresBinDir,
  startTempPostgres,
  type TempPostgres,
} from "./support/temp-postgres.ts";

// A loaded 2-core machine can be slow without anything being wrong: a generous bound, not 5 s.
setDefaultTimeout(60_000);

/**
 * Kept results in the shared store against a real PostgreSQL (in process): what one replica keeps
 * for a principal, another reads page by page, exactly (texts with 2- and 4-byte characters and
 * lone surrogates, blobs); another principal, an expired row or an evicted one is not found; the
 * bounds evict the oldest, per principal and for the whole store; nothing is stored in clear.
 */
const hasPostgres = postgresBinDir() !== undefined;
if (!hasPostgres) process.stderr.write(POSTGRES_MISSING);

const env = { MCPPROXY_STORE_KEY: randomBytes(32).toString("hex") };
const logger = createLogger({ level: "error" });
let pg: TempPostgres;
const opened: SharedStore[] = [];
const open = async () => {
  const store = await openSharedStore({ url: pg.url, shown: pg.url, env, logger });
  opened.push(store);
  return store;
};

beforeAll(async () => {
  if (hasPostgres) pg = await startTempPostgres();
});
afterAll(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => {});
  await pg?.cleanup();
});
beforeEach(async () => {
  if (!hasPostgres) return;
  const store = await open();
  await store.sql`TRUNCATE mcpproxy.kept_results`;
});

const PAGE = 300;
const BOUNDS: KeptBounds = { ttlMs: 60_000, perOwner: 10, ownerBytes: 10_000_000, totalBytes: 100_000_000 };

/** One replica's kept results over `store`: its own memory, and the shared store's table. */
function replicaOver(store: SharedStore, bounds: KeptBounds = BOUNDS) {
  const memory = createResultStore({ ttlMs: 60_000, perScope: 10, scopeBytes: 1e8, totalBytes: 1e9 });
  const shared = createSharedResults(keptResultsOf(store), { ...bounds, pageChars: PAGE }, logger);
  return createResultSpill({ spillBytes: 1_000, headChars: 100, pageChars: PAGE }, memory, shared);
}

/** Spills `result` for `scope` on `spill` and writes what it kept to the store, as keepingOut does. */
async function keep(spill: ReturnType<typeof replicaOver>, scope: string, result: CallToolResult) {
  const kept: Parameters<typeof spill.spill>[2]["kept"] = [];
  const answer = spill.spill(result, scope, { keepStructured: () => false, hasReadTool: true, kept });
  await spill.shared!.keep(kept!);
  return (answer.content.filter((block) => block.type === "resource_link") as { uri: string }[]).map(
    (link) => link.uri,
  );
}

/** Every page of `uri` from the shared store, following nextOffset; `decode` turns a page into its part. */
async function readAll(spill: ReturnType<typeof replicaOver>, scope: string, uri: string, length?: number) {
  const parts: string[] = [];
  let offset: number | undefined = 0;
  for (let pages = 0; offset !== undefined && pages < 100_000; pages++) {
    const read = await spill.shared!.read(uri, scope, { offset, ...(length ? { length } : {}) });
    parts.push(read.data);
    offset = read.page.nextOffset;
  }
  return parts;
}

describe.if(hasPostgres)("kept results in the shared store", () => {
  test("a text kept on one replica is read exactly on another, page by page, whatever the page length (pairs never split, lone surrogates kept)", async () => {
    const [a, b] = [replicaOver(await open()), replicaOver(await open())];
    const text =
      Array.from({ length: 600 }, (_, i) => `line ${i}: é ✓ 😀 ${"abcdefghij".slice(i % 10)}\n`).join("") +
      "lone \ud800 and \udc00 halves";
    const [uri] = await keep(a, "principal:alice", { content: [{ type: "text", text }] });
    // Not in b's memory: b reads it from the store.
    expect(() => b.read(uri!, "principal:alice")).toThrow(ResultNotFound);
    for (const length of [undefined, 1, 7, 299]) {
      const pages = await readAll(b, "principal:alice", uri!, length);
      expect(pages.join("")).toBe(text);
      for (const page of pages)
        expect(page.charCodeAt(0) >= 0xdc00 && page.charCodeAt(0) <= 0xdfff).toBe(false);
    }
    // A page that starts inside a pair starts on it, as in memory.
    const odd = text.indexOf("😀") + 1;
    const fromStore = await b.shared!.read(uri!, "principal:alice", { offset: odd, length: 5 });
    expect(fromStore).toMatchObject({
      data: a.read(uri!, "principal:alice", { offset: odd, length: 5 })!.data,
    });
    expect(fromStore.page).toEqual(a.read(uri!, "principal:alice", { offset: odd, length: 5 })!.page);
    await expect(b.shared!.read(uri!, "principal:alice", { offset: text.length + 1 })).rejects.toThrow(
      /past the end/,
    );
  });

  test("a blob's pages are its exact bytes on another replica", async () => {
    const [a, b] = [replicaOver(await open()), replicaOver(await open())];
    const bytes = Buffer.from(Array.from({ length: 20_001 }, (_, i) => (i * 131 + 7) % 256));
    const [uri] = await keep(a, "principal:alice", {
      content: [{ type: "image", data: bytes.toString("base64"), mimeType: "image/png" }],
    });
    for (const length of [undefined, 1, 17, 299]) {
      const pages = await readAll(b, "principal:alice", uri!, length);
      expect(Buffer.concat(pages.map((page) => Buffer.from(page, "base64"))).equals(bytes)).toBe(true);
    }
    const first = await b.shared!.read(uri!, "principal:alice", { length: 3 });
    expect(first.entry).toMatchObject({ kind: "blob", mimeType: "image/png", bytes: 20_001 });
  });

  test("another principal, a 2025 session's scope and an unknown id are not found", async () => {
    const [a, b] = [replicaOver(await open()), replicaOver(await open())];
    const [uri] = await keep(a, "principal:alice", { content: [{ type: "text", text: "x".repeat(5_000) }] });
    await expect(b.shared!.read(uri!, "principal:bob")).rejects.toBeInstanceOf(ResultNotFound);
    await expect(b.shared!.read(uri!, "session:alice")).rejects.toBeInstanceOf(ResultNotFound);
    await expect(b.shared!.read(`${uri}x`, "principal:alice")).rejects.toBeInstanceOf(ResultNotFound);
    // A 2025 session's results are never written to the store.
    const store = await open();
    await keep(a, "session:s1", { content: [{ type: "text", text: "y".repeat(5_000) }] });
    const [{ rows }] =
      (await store.sql`SELECT count(*)::int AS rows FROM mcpproxy.kept_results`) as unknown as [
        { rows: number },
      ];
    expect(rows).toBe(1);
  });

  test("nothing of the result, the principal or the id's owner is stored in clear; the data is stored uncompressed for slicing", async () => {
    const store = await open();
    const a = replicaOver(store);
    const marker = "SECRET-VALUE-4242 ".repeat(500);
    await keep(a, "principal:alice", { content: [{ type: "text", text: marker }] });
    const [row] = await store.sql<
      { data: Buffer; owner: Buffer }[]
    >`SELECT data, owner FROM mcpproxy.kept_results`;
    for (const form of ["utf16le", "utf8"] as const) {
      expect(row!.data.includes(Buffer.from("SECRET-VALUE-4242", form))).toBe(false);
      expect(row!.owner.includes(Buffer.from("alice", form))).toBe(false);
    }
    const [column] = await store.sql<{ attstorage: string }[]>`
      SELECT attstorage FROM pg_attribute WHERE attrelid = 'mcpproxy.kept_results'::regclass AND attname = 'data'`;
    expect(column?.attstorage).toBe("e");
  });

  test("an expired result is not found on any replica, and the sweep deletes it", async () => {
    const store = await open();
    const a = replicaOver(store, { ...BOUNDS, ttlMs: 300 });
    const [uri] = await keep(a, "principal:alice", { content: [{ type: "text", text: "z".repeat(5_000) }] });
    const b = replicaOver(await open());
    expect((await b.shared!.read(uri!, "principal:alice", { length: 3 })).data).toBe("zzz");
    await Bun.sleep(400);
    await expect(b.shared!.read(uri!, "principal:alice")).rejects.toBeInstanceOf(ResultNotFound);
    await b.shared!.sweep();
    const [{ rows }] =
      (await store.sql`SELECT count(*)::int AS rows FROM mcpproxy.kept_results`) as unknown as [
        { rows: number },
      ];
    expect(rows).toBe(0);
  });

  test("per principal (count and bytes) and for the whole store, the oldest go first, whichever replica kept them", async () => {
    const bounds = { ...BOUNDS, perOwner: 3, ownerBytes: 25_000, totalBytes: 45_000 };
    const [a, b] = [replicaOver(await open(), bounds), replicaOver(await open(), bounds)];
    const readable = async (uri: string, scope: string) =>
      b.shared!.read(uri, scope, { length: 1 }).then(
        () => true,
        () => false,
      );
    const text = (n: number) => ({ content: [{ type: "text" as const, text: "q".repeat(n) }] });
    // Count: a fourth of alice's evicts the first (kept by the other replica).
    const alice = [];
    for (const [i, spill] of [a, b, a, b].entries())
      alice.push((await keep(spill, "principal:alice", text(2_000 + i)))[0]!);
    expect(await Promise.all(alice.map((uri) => readable(uri, "principal:alice")))).toEqual([
      false,
      true,
      true,
      true,
    ]);
    // Bytes: 22,000 more for alice leave room for one other (25,000 at most).
    const large = (await keep(a, "principal:alice", text(22_000)))[0]!;
    expect(await Promise.all([...alice, large].map((uri) => readable(uri, "principal:alice")))).toEqual([
      false,
      false,
      false,
      true,
      true,
    ]);
    // The whole store: bob's 21,000 push out alice's oldest until 45,000 hold.
    const bob = (await keep(b, "principal:bob", text(21_000)))[0]!;
    expect(await readable(bob, "principal:bob")).toBe(true);
    expect(await readable(alice[3]!, "principal:alice")).toBe(false);
    expect(await readable(large, "principal:alice")).toBe(true);
  });
});
