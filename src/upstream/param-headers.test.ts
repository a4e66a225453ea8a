import { describe, expect, test } from "bun:test";
import { encodeHeaderValue, paramHeaderValues, scanParamHeaders } from "./param-headers.ts";

const schema = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  ...extra,
});

describe("x-mcp-header marks", () => {
  test("are found on primitive properties reached through properties, at any depth", () => {
    const scan = scanParamHeaders(
      schema({
        region: { type: "string", "x-mcp-header": "Region" },
        nested: { type: "object", properties: { n: { type: "integer", "x-mcp-header": "N" } } },
        plain: { type: "string" },
      }),
    );
    expect(scan).toEqual({
      headers: [
        { path: ["region"], name: "Region", type: "string" },
        { path: ["nested", "n"], name: "N", type: "integer" },
      ],
    });
  });

  test("a property named x-mcp-header is a property, not a mark", () => {
    expect(scanParamHeaders(schema({ "x-mcp-header": { type: "string" } }))).toEqual({ headers: [] });
  });

  const invalid: [string, unknown][] = [
    [
      "a name that is not a token (header injection)",
      schema({ a: { type: "string", "x-mcp-header": "A\r\nX: 1" } }),
    ],
    ["an empty name", schema({ a: { type: "string", "x-mcp-header": "" } })],
    ["a name that is not a string", schema({ a: { type: "string", "x-mcp-header": 7 } })],
    ["a number property", schema({ a: { type: "number", "x-mcp-header": "A" } })],
    ["an object property", schema({ a: { type: "object", "x-mcp-header": "A" } })],
    ["a property without a type", schema({ a: { "x-mcp-header": "A" } })],
    [
      "the same name twice, in other case",
      schema({
        a: { type: "string", "x-mcp-header": "Same" },
        b: { type: "string", "x-mcp-header": "SAME" },
      }),
    ],
    ["a mark on the root", { type: "object", "x-mcp-header": "Root" }],
    [
      "a mark under items",
      schema({ list: { type: "array", items: { type: "string", "x-mcp-header": "I" } } }),
    ],
    [
      "a mark under anyOf",
      schema({}, { anyOf: [{ properties: { a: { type: "string", "x-mcp-header": "A" } } }] }),
    ],
    ["a mark under $defs", schema({}, { $defs: { d: { type: "string", "x-mcp-header": "D" } } })],
    [
      "a mark under additionalProperties",
      schema({}, { additionalProperties: { type: "string", "x-mcp-header": "X" } }),
    ],
  ];
  for (const [what, input] of invalid) {
    test(`make the tool invalid: ${what}`, () => {
      expect(scanParamHeaders(input)).toHaveProperty("problem");
    });
  }
});

describe("Mcp-Param-* header values", () => {
  const headers = [
    { path: ["region"], name: "Region", type: "string" as const },
    { path: ["n"], name: "N", type: "integer" as const },
    { path: ["o", "dry"], name: "Dry", type: "boolean" as const },
  ];

  test("mirror present arguments of the declared type; absent, null or mistyped ones send none", () => {
    expect(paramHeaderValues(headers, { region: "eu", n: 42, o: { dry: false } })).toEqual({
      "Mcp-Param-Region": "eu",
      "Mcp-Param-N": "42",
      "Mcp-Param-Dry": "false",
    });
    expect(paramHeaderValues(headers, { region: null, n: 1.5, o: "not an object" })).toEqual({});
    expect(paramHeaderValues(headers, undefined)).toEqual({});
  });

  test("are plain when visible ASCII, Base64 otherwise, and never carry a line break", () => {
    expect(encodeHeaderValue("us-west 1")).toBe("us-west 1");
    const wrapped = (value: string) => `=?base64?${Buffer.from(value).toString("base64")}?=`;
    for (const value of [
      "Zürich",
      " padded",
      "trailing ",
      "a\r\nX-Injected: 1",
      "tab\there",
      "",
      "=?base64?abc?=",
    ]) {
      expect(encodeHeaderValue(value)).toBe(wrapped(value));
      expect(encodeHeaderValue(value)).not.toMatch(/[\r\n]/);
    }
  });
});
