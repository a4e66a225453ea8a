import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { seededRandom } from "../../../tests/helpers.ts";
import { CallToolArgs, plainCallToolArgs } from "./builtin-tools.ts";

describe("call_tool's common arguments are told as CallToolArgs parses them", () => {
  test("on odd and random arguments, __proto__ keys among them", () => {
    const random = seededRandom(17);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const values = {
      name: ['"fx__echo"', '""', "5", "null", '["a"]', '{"a":1}'],
      arguments: [
        "{}",
        '{"message":"ping"}',
        '{"b":1,"a":{"c":[1]}}',
        '{"2":1,"1":2,"x":3}',
        '{"__proto__":{"x":1}}',
        '{"constructor":1}',
        '{"prototype":1}',
        '{"a":1,"__proto__":1}',
        '"{\\"a\\":1}"',
        '"[1]"',
        '"not json"',
        "[]",
        "null",
        "3",
      ],
      __proto__: ['{"name":"other"}', "{}"],
      extra: ["1"],
    };
    const corpus: unknown[] = [null, [], "call", 3, Object.create({ name: "inherited" })];
    for (let i = 0; i < 4000; i++) {
      const entries: string[] = [];
      for (const key of ["name", "arguments", "__proto__", "extra"] as const) {
        if (random() >= (key === "name" ? 0.95 : key === "arguments" ? 0.8 : 0.1)) continue;
        // Mostly what agents send (the first few of each), the odd ones among them.
        const usual = random() < 0.7 ? values[key].slice(0, key === "arguments" ? 4 : 1) : values[key];
        entries.push(`"${key}":${pick(usual)}`);
      }
      if (random() < 0.3) entries.reverse();
      corpus.push(JSON.parse(`{${entries.join(",")}}`));
    }
    let told = 0;
    for (const args of corpus) {
      const plain = plainCallToolArgs(args);
      if (plain === undefined) continue;
      told++;
      const parsed = v.safeParse(CallToolArgs, args);
      expect(parsed.success).toBe(true);
      const output = parsed.output as { name: string; arguments?: Record<string, unknown> };
      expect(Object.keys(plain)).toEqual(Object.keys(output));
      expect(JSON.stringify(plain)).toBe(JSON.stringify(output));
      expect(plain.arguments === undefined).toBe(output.arguments === undefined);
      if (plain.arguments) {
        expect(Object.keys(plain.arguments)).toEqual(Object.keys(output.arguments!));
        expect(Object.getPrototypeOf(plain.arguments)).toBe(Object.prototype);
      }
    }
    expect(told).toBeGreaterThan(1000);
  });
});
