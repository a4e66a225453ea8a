import { describe, expect, test } from "bun:test";
import { createResultStore } from "./result-store.ts";

const text = (data: string) => ({ kind: "text" as const, data, mimeType: "text/plain" });

function storeAt(options: Partial<Parameters<typeof createResultStore>[0]> = {}) {
  let now = 1_000;
  const store = createResultStore({
    ttlMs: 10_000,
    perScope: 3,
    scopeBytes: 100,
    totalBytes: 250,
    now: () => now,
    ...options,
  });
  return { store, advance: (ms: number) => (now += ms) };
}

describe("the kept-results store", () => {
  test("an entry is read back only under its own scope, with an id nobody can guess", () => {
    const { store } = storeAt();
    const a = store.put("session:a", text("secret of A"))!;
    expect(a.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(store.get("session:a", a.id)?.data).toBe("secret of A");
    expect(store.get("session:b", a.id)).toBeUndefined();
    expect(store.get("principal:local", a.id)).toBeUndefined();
    expect(store.put("session:a", text("again"))!.id).not.toBe(a.id);
  });

  test("an entry expires after ttlMs, and sweep frees what expired", () => {
    const { store, advance } = storeAt();
    const a = store.put("s", text("x".repeat(10)))!;
    advance(9_999);
    expect(store.get("s", a.id)).toBeDefined();
    advance(1);
    expect(store.get("s", a.id)).toBeUndefined();
    store.put("s", text("y"));
    advance(10_000);
    store.sweep();
    expect(store.size()).toEqual({ entries: 0, bytes: 0 });
  });

  test("a scope keeps at most perScope entries and scopeBytes bytes, the oldest going first", () => {
    const { store } = storeAt();
    const ids = [1, 2, 3, 4].map((n) => store.put("s", text(String(n).repeat(10)))!.id);
    expect(store.get("s", ids[0]!)).toBeUndefined();
    expect(ids.slice(1).every((id) => store.get("s", id))).toBe(true);
    // 3 × 10 bytes held: a fourth entry takes the oldest's place (count), and 90 bytes more
    // would pass 100 with two left (bytes): the next oldest goes too.
    const big = store.put("s", text("z".repeat(90)))!;
    expect(store.get("s", ids[1]!)).toBeUndefined();
    expect(store.get("s", ids[2]!)).toBeUndefined();
    expect(store.get("s", ids[3]!)).toBeDefined();
    expect(store.get("s", big.id)).toBeDefined();
    // Another scope's entries are not evicted for this one's count.
    const other = store.put("t", text("o"))!;
    store.put("s", text("w"));
    expect(store.get("t", other.id)).toBeDefined();
  });

  test("the whole store keeps at most totalBytes, evicting the oldest of any scope", () => {
    const { store } = storeAt();
    const a = store.put("a", text("a".repeat(100)))!;
    const b = store.put("b", text("b".repeat(100)))!;
    const c = store.put("c", text("c".repeat(100)))!;
    expect(store.get("a", a.id)).toBeUndefined();
    expect(store.get("b", b.id)).toBeDefined();
    expect(store.get("c", c.id)).toBeDefined();
    expect(store.size()).toEqual({ entries: 2, bytes: 200 });
  });

  test("bytes are UTF-8 of text and decoded bytes of a blob; one over a scope's bound is refused", () => {
    const { store } = storeAt();
    expect(store.put("s", text("é".repeat(10)))!.bytes).toBe(20);
    const blob = Buffer.alloc(30, 7).toString("base64");
    expect(store.put("s", { kind: "blob", data: blob, mimeType: "image/png" })!.bytes).toBe(30);
    expect(store.put("s", text("x".repeat(101)))).toBeUndefined();
  });

  test("drop forgets one scope's entries only", () => {
    const { store } = storeAt();
    const a = store.put("a", text("1"))!;
    const b = store.put("b", text("2"))!;
    store.drop("a");
    expect(store.get("a", a.id)).toBeUndefined();
    expect(store.get("b", b.id)).toBeDefined();
  });
});
