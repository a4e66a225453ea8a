import { describe, expect, test } from "bun:test";
import { mergedHint, ownHint, scopeFor, UNCACHED } from "./cache-hints.ts";

const publicHint = (ttlMs: number) => ({ ttlMs, cacheScope: "public" });
const privateHint = (ttlMs: number) => ({ ttlMs, cacheScope: "private" });

describe("scopeFor: public only where the answer cannot differ by caller", () => {
  test("an endpoint that answers everyone alike keeps public, unless a part is private", () => {
    expect(scopeFor("everyone")).toBe("public");
    expect(scopeFor("everyone", ["public", "public"])).toBe("public");
    expect(scopeFor("everyone", ["public", "private"])).toBe("private");
  });

  test("an endpoint whose answers differ by principal is private, whatever its parts say", () => {
    expect(scopeFor("each-principal")).toBe("private");
    expect(scopeFor("each-principal", ["public", "public"])).toBe("private");
  });
});

describe("the proxy's own answers", () => {
  test("carry the TTL asked for, public only for everyone", () => {
    expect(ownHint(60_000, "everyone")).toEqual({ ttlMs: 60_000, cacheScope: "public" });
    expect(ownHint(60_000, "each-principal")).toEqual({ ttlMs: 60_000, cacheScope: "private" });
    expect(ownHint(0, "each-principal")).toEqual({ ttlMs: 0, cacheScope: "private" });
  });
});

describe("mergedHint: an answer built from upstream answers", () => {
  test("the shortest TTL; private if any part is", () => {
    expect(mergedHint([publicHint(60_000), publicHint(5_000)], "everyone")).toEqual({
      ttlMs: 5_000,
      cacheScope: "public",
    });
    expect(mergedHint([publicHint(60_000), privateHint(30_000)], "everyone")).toEqual({
      ttlMs: 30_000,
      cacheScope: "private",
    });
  });

  test("private at an endpoint whose answers differ by principal, even when every upstream said public", () => {
    expect(mergedHint([publicHint(60_000), publicHint(5_000)], "each-principal")).toEqual({
      ttlMs: 5_000,
      cacheScope: "private",
    });
  });

  test("not cached at all when no upstream answered, or one gave no well-formed hint", () => {
    expect(mergedHint([], "everyone")).toEqual(UNCACHED);
    expect(mergedHint([publicHint(60_000), { tools: [] }], "everyone")).toEqual(UNCACHED);
    expect(mergedHint([{ ttlMs: -1, cacheScope: "public" }], "everyone")).toEqual(UNCACHED);
    expect(mergedHint([{ ttlMs: 5, cacheScope: "shared" }], "everyone")).toEqual(UNCACHED);
  });
});
