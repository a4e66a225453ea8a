import { describe, expect, test } from "bun:test";
import { afterOf, cursorAfter, pageOf } from "./list-pages.ts";

const item = (name: string, bytes = 10) => ({ name, bytes });
const fixed = [item("retrieve_tools"), item("call_tool")];
const sorted = ["a__1", "a__2", "b__1", "b__2", "c__1"].map((name) => item(name));
const names = (page: { items: { name: string }[] } | undefined) => page?.items.map((i) => i.name);

describe("tools/list pages", () => {
  test("walks the proxy's own tools then the sorted ones, each once, with nextCursor on all pages but the last", () => {
    const limits = { tools: 3, bytes: 1_000 };
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = pageOf(fixed, sorted, cursor, limits)!;
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((i) => i.name));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...fixed, ...sorted].map((i) => i.name));
  });

  test("ends a page before the tool that would take it over the byte bound, but never gives an empty page", () => {
    const big = [item("a", 600), item("b", 600), item("c", 2_000)];
    const first = pageOf([], big, undefined, { tools: 10, bytes: 1_000 })!;
    expect(names(first)).toEqual(["a"]);
    const second = pageOf([], big, first.nextCursor, { tools: 10, bytes: 1_000 })!;
    expect(names(second)).toEqual(["b"]);
    const third = pageOf([], big, second.nextCursor, { tools: 10, bytes: 1_000 })!;
    expect(names(third)).toEqual(["c"]);
    expect(third.nextCursor).toBeUndefined();
  });

  test("a cursor whose tool went away goes on after where its name would be", () => {
    const cursor = cursorAfter("a__3");
    expect(names(pageOf(fixed, sorted, cursor))).toEqual(["b__1", "b__2", "c__1"]);
    expect(names(pageOf(fixed, sorted, cursorAfter("call_tool")))).toEqual(sorted.map((i) => i.name));
  });

  test("a cursor that is not one of ours is refused", () => {
    expect(pageOf(fixed, sorted, "not-a-cursor")).toBeUndefined();
    expect(pageOf(fixed, sorted, Buffer.from('{"after":1}').toString("base64url"))).toBeUndefined();
    expect(afterOf(cursorAfter("x__y"))).toBe("x__y");
  });
});
