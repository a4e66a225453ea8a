import { describe, expect, test } from "bun:test";
import { ajvFor, COMPILES_PER_INSTANCE, dialectOf } from "./json-schema-dialects.ts";

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

  test("an instance is replaced after its share of compiles, and what it compiled keeps working", () => {
    const schemaOf = (i: number) => ({ type: "object", properties: { [`p${i}`]: { type: "integer" } } });
    const first = ajvFor(schemaOf(0));
    const validate = first.compile(schemaOf(0));
    const seen = new Set([first]);
    for (let i = 1; i <= COMPILES_PER_INSTANCE; i++) seen.add(ajvFor(schemaOf(i)));
    // The dialect's instance changed once (ajv keeps all it compiled: it must not live forever) ...
    expect(seen.size).toBe(2);
    // ... and a validator of the old one still judges.
    expect(validate({ p0: 1 })).toBe(true);
    expect(validate({ p0: "one" })).toBe(false);
    // Another dialect counts on its own.
    const draft7 = { $schema: "http://json-schema.org/draft-07/schema#", type: "string" };
    expect(ajvFor(draft7)).not.toBe(ajvFor(schemaOf(0)));
  });
});
