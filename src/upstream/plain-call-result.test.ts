import { describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/client";
import { seededRandom } from "../../tests/helpers.ts";
import { callResultSchema, isPlainCallResult } from "./plain-call-result.ts";

/** The SDK's own check of a tools/call result on a client of `era` (what a call ran before). */
function sdkCheck(era: "modern" | "legacy") {
  const client = new Client({ name: "t", version: "1" });
  if (era === "modern")
    (client as unknown as { _negotiatedProtocolVersion: string })._negotiatedProtocolVersion = "2026-07-28";
  const codec = (
    client as unknown as {
      _wireCodec(): { validateResult(m: string, v: unknown): { ok: boolean; value?: unknown } };
    }
  )._wireCodec();
  return { client, check: (value: unknown) => codec.validateResult("tools/call", value) };
}

const parsed = (json: string) => JSON.parse(json) as unknown;

/** Results as servers send them, and the odd ones an attacker or a broken server might. */
const SAMPLES: unknown[] = [
  { content: [{ type: "text", text: "hi" }] },
  { content: [] },
  {
    content: [
      { type: "text", text: "a" },
      { type: "text", text: "b" },
    ],
    isError: true,
  },
  { content: [{ type: "text", text: "a" }], structuredContent: { n: 1, deep: { x: [1, 2] } } },
  { content: [{ type: "text", text: "a" }], structuredContent: { n: 1 }, isError: false },
  { isError: false, content: [{ type: "text", text: "order" }] },
  { content: [{ text: "order", type: "text" }] },
  { content: [{ type: "text", text: "extra", more: 1 }] },
  { content: [{ type: "text", text: 5 }] },
  { content: [{ type: "image", data: "aGk=", mimeType: "image/png" }] },
  { content: [{ type: "text", text: "a", annotations: { priority: 0.5 } }] },
  { content: [{ type: "text", text: "a" }], _meta: { x: 1 } },
  { content: [{ type: "text", text: "a" }], own: 1 },
  { content: [{ type: "text", text: "a" }], isError: "yes" },
  { content: [{ type: "text", text: "a" }], structuredContent: [1, 2] },
  { content: [{ type: "text", text: "a" }], structuredContent: null },
  { content: [{ type: "text", text: "a" }], structuredContent: "text" },
  { content: "not a list" },
  { structuredContent: { a: 1 } },
  {},
  null,
  [],
  "text",
  parsed('{"content":[{"type":"text","text":"a"}],"__proto__":{"polluted":1}}'),
  parsed('{"content":[{"type":"text","text":"a"}],"structuredContent":{"__proto__":{"polluted":1},"b":2}}'),
  parsed('{"content":[{"__proto__":{"type":"text"},"type":"text","text":"a"}]}'),
  parsed('{"content":[{"type":"text","text":"a"}],"structuredContent":{"constructor":{"prototype":1}}}'),
  { content: [{ type: "text", text: "a" }], toString: 1 },
];

/** Random results near the plain shape: keys dropped, reordered, retyped, added. */
function randomResults(count: number): unknown[] {
  const random = seededRandom(7);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const values = [true, false, 0, 1.5, "s", null, [], {}, { a: 1 }, [{ type: "text", text: "x" }]];
  const block = () =>
    pick([
      { type: "text", text: "x" },
      { text: "x", type: "text" },
      { type: "text", text: pick(values) },
      { type: pick(["text", "image", "other"]), text: "x" },
      { type: "text", text: "x", [pick(["annotations", "_meta", "x", "__proto__"])]: pick(values) },
    ]);
  const results: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const entries: [string, unknown][] = [];
    for (const key of ["content", "structuredContent", "isError", "_meta", "other", "__proto__"]) {
      if (random() < (key === "content" ? 0.9 : 0.3)) {
        const value =
          key === "content"
            ? random() < 0.9
              ? Array.from({ length: Math.floor(random() * 3) }, block)
              : pick(values)
            : pick(values);
        entries.push([key, value]);
      }
    }
    if (random() < 0.3) entries.reverse();
    // Through JSON, as results arrive: a `__proto__` key is then an own key.
    results.push(
      JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`),
    );
  }
  return results;
}

describe("a plain tools/call result is what the SDK's schema makes of it", () => {
  for (const era of ["legacy", "modern"] as const) {
    test(`${era}: every result taken as plain passes the SDK's check unchanged, to the byte`, () => {
      const { check } = sdkCheck(era);
      let plain = 0;
      for (const sample of [...SAMPLES, ...randomResults(3000)]) {
        if (!isPlainCallResult(sample, era)) continue;
        plain++;
        const sdk = check(sample);
        expect(sdk.ok).toBe(true);
        expect(JSON.stringify(sdk.value)).toBe(JSON.stringify(sample));
      }
      expect(plain).toBeGreaterThan(100);
    });

    test(`${era}: the schema answers as the SDK's check does, plain or not`, async () => {
      const { client, check } = sdkCheck(era);
      const schema = callResultSchema(client)["~standard"];
      for (const sample of [...SAMPLES, ...randomResults(1000)]) {
        const ours = await schema.validate(sample);
        const sdk = check(sample);
        if (sdk.ok)
          expect(JSON.stringify("value" in ours ? ours.value : undefined)).toBe(JSON.stringify(sdk.value));
        else expect(ours.issues?.length).toBe(1);
      }
    });
  }

  test("what the schema drops or rebuilds is never taken as plain", () => {
    for (const era of ["legacy", "modern"] as const) {
      expect(isPlainCallResult(SAMPLES[23], era)).toBe(false);
      expect(isPlainCallResult(SAMPLES[25], era)).toBe(false);
      expect(isPlainCallResult({ content: [{ type: "text", text: "a", more: 1 }] }, era)).toBe(false);
      expect(isPlainCallResult({ isError: true, content: [] }, era)).toBe(false);
    }
    // A 2025 schema rebuilds structuredContent as a record, dropping a `__proto__` key; a 2026 one keeps it as sent.
    expect(isPlainCallResult(SAMPLES[24], "legacy")).toBe(false);
  });
});
