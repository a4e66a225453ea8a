import { describe, expect, test } from "bun:test";
import { blobPage, textPage } from "./result-pages.ts";

/**
 * A page cut from a slice (what the shared store sends: the page and one code unit either side)
 * is the page cut from the whole, wherever it starts: the replica that kept a result and one that
 * reads it from the store answer the same.
 */
describe("pages from a slice", () => {
  const text = `${Array.from({ length: 60 }, (_, i) => `${i} 😀é✓\n`).join("")}\udc00 lone \ud800`;

  test("a text page from its window equals the page from the whole text, at every offset and length", () => {
    for (let offset = 0; offset <= text.length; offset++)
      for (const length of [1, 2, 3, 7, 50]) {
        const base = Math.max(0, offset - 1);
        const window = text.slice(base, offset + length + 1);
        expect(textPage(window, base, text.length, { offset, length })).toEqual(
          textPage(text, 0, text.length, { offset, length }),
        );
      }
  });

  test("pages followed by nextOffset rebuild the text, none starting on the second half of a pair", () => {
    let out = "";
    for (let offset: number | undefined = 0; offset !== undefined; ) {
      const base = Math.max(0, offset - 1);
      const { data, page } = textPage(text.slice(base, offset + 6), base, text.length, { offset, length: 5 });
      if (page.nextOffset !== undefined)
        expect(/^[\udc00-\udfff]/.test(text.slice(page.nextOffset))).toBe(false);
      out += data;
      offset = page.nextOffset;
    }
    expect(out).toBe(text);
  });

  test("a blob page from its window is the same bytes; an offset past the end is refused", () => {
    const bytes = Buffer.from(Array.from({ length: 100 }, (_, i) => i));
    expect(blobPage(bytes.subarray(40, 47), 40, 100, { offset: 40, length: 7 })).toEqual(
      blobPage(bytes, 0, 100, { offset: 40, length: 7 }),
    );
    expect(() => textPage("", 0, 10, { offset: 11, length: 1 })).toThrow(/past the end/);
    expect(() => blobPage(Buffer.alloc(0), 0, 10, { offset: 11, length: 1 })).toThrow(/past the end/);
  });
});
