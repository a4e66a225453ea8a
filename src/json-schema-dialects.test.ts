import { describe, expect, test } from "bun:test";
import { ajvFor, dialectOf } from "./json-schema-dialects.ts";

describe("dialectOf", () => {
  test("reads $schema, and takes 2020-12 when there is none or it is unknown", () => {
    expect(dialectOf({ type: "object" })).toBe("2020-12");
    expect(dialectOf({ $schema: "https://json-schema.org/draft/2020-12/schema" })).toBe("2020-12");
    expect(dialectOf({ $schema: "https://json-schema.org/draft/2019-09/schema" })).toBe("2019-09");
    expect(dialectOf({ $schema: "http://json-schema.org/draft-07/schema#" })).toBe("draft-07");
    expect(dialectOf({ $schema: "http://json-schema.org/draft-04/schema#" })).toBe("draft-07");
    expect(dialectOf({ $schema: "http://127.0.0.1:9/meta.json" })).toBe("2020-12");
  });
});

describe("ajvFor", () => {
  test("two schemas with one $id compile side by side: neither is registered for the other to reach", () => {
    const first = { $id: "https://example.com/args", type: "string" };
    const second = { $id: "https://example.com/args", type: "number" };
    expect(ajvFor(first).compile(first)("x")).toBe(true);
    expect(ajvFor(second).compile(second)(1)).toBe(true);
    const reaching = { type: "object", properties: { a: { $ref: "https://example.com/args" } } };
    expect(() => ajvFor(reaching).compile(reaching)).toThrow();
  });
});
