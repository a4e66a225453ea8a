import { describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/client";
import { Server } from "@modelcontextprotocol/server";
import { seededRandom } from "../../tests/helpers.ts";
import { callResultSchema, plainCallResult } from "./plain-call-result.ts";

type Codec = { validateResult(m: string, v: unknown): { ok: boolean; value?: unknown } };

/** The SDK's own check of a tools/call result on a client of `era` (what a call ran before), and on a server's. */
function sdkCheck(era: "modern" | "legacy") {
  const client = new Client({ name: "t", version: "1" });
  const server = new Server({ name: "t", version: "1" }, { capabilities: { tools: {} } });
  for (const side of [client, server])
    if (era === "modern")
      (side as unknown as { _negotiatedProtocolVersion: string })._negotiatedProtocolVersion = "2026-07-28";
  const codec = (client as unknown as { _wireCodec(): Codec })._wireCodec();
  const serverCodec = (server as unknown as { _wireCodec(): Codec })._wireCodec();
  return {
    client,
    check: (value: unknown) => codec.validateResult("tools/call", value),
    serverCheck: (value: unknown) => serverCodec.validateResult("tools/call", value),
  };
}

const parsed = (json: string) => JSON.parse(json) as unknown;
const SERVER_INFO = "io.modelcontextprotocol/serverInfo";

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
  { _meta: { [SERVER_INFO]: { name: "s", version: "1" } }, content: [{ type: "text", text: "a" }] },
  { _meta: {}, content: [{ type: "text", text: "a" }], isError: true },
  { _meta: { [SERVER_INFO]: { version: "1", name: "s" } }, content: [{ type: "text", text: "a" }] },
  { _meta: { [SERVER_INFO]: { name: "s", version: "1", title: "S" } }, content: [] },
  { _meta: { [SERVER_INFO]: { name: "s", version: 1 } }, content: [] },
  { _meta: { [SERVER_INFO]: { name: "s" } }, content: [] },
  { _meta: { [SERVER_INFO]: null }, content: [] },
  { _meta: { x: 1, [SERVER_INFO]: { name: "s", version: "1" } }, content: [] },
  { _meta: { [SERVER_INFO]: { name: "s", version: "1" }, x: 1 }, content: [] },
  { content: [], _meta: { [SERVER_INFO]: { name: "s", version: "1" } } },
  { _meta: [], content: [] },
  parsed(`{"_meta":{"${SERVER_INFO}":{"name":"s","version":"1","__proto__":{"x":1}}},"content":[]}`),
  parsed(`{"_meta":{"__proto__":{"x":1}},"content":[]}`),
];

/** Random results near the plain shape: keys dropped, reordered, retyped, added. */
function randomResults(count: number): unknown[] {
  const random = seededRandom(7);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const values = [true, false, 0, 1.5, "s", null, [], {}, { a: 1 }, [{ type: "text", text: "x" }]];
  const meta = () =>
    pick([
      { [SERVER_INFO]: { name: "s", version: "1" } },
      { [SERVER_INFO]: { version: "1", name: "s" } },
      { [SERVER_INFO]: { name: "s", version: "1", [pick(["title", "x", "__proto__"])]: pick(values) } },
      { [SERVER_INFO]: { name: pick(values), version: "1" } },
      { [SERVER_INFO]: pick(values), [pick(["x", "progressToken", "__proto__"])]: pick(values) },
      {},
    ]);
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
    for (const key of ["_meta", "content", "structuredContent", "isError", "other", "__proto__"]) {
      if (random() < (key === "content" ? 0.9 : 0.3)) {
        const value =
          key === "content"
            ? random() < 0.9
              ? Array.from({ length: Math.floor(random() * 3) }, block)
              : pick(values)
            : key === "_meta" && random() < 0.8
              ? meta()
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
      const { check, serverCheck } = sdkCheck(era);
      let plain = 0;
      let stamped = 0;
      let reordered = 0;
      for (const sample of [...SAMPLES, ...randomResults(3000)]) {
        const ours = plainCallResult(sample, era);
        if (ours === undefined) continue;
        plain++;
        if (ours !== sample) reordered++;
        if ((sample as { _meta?: unknown })._meta !== undefined) stamped++;
        for (const sdk of [check(sample), serverCheck(sample)]) {
          expect(sdk.ok).toBe(true);
          expect(JSON.stringify(sdk.value)).toBe(JSON.stringify(ours));
        }
        // The sample itself where it is in the schema's order; a copy otherwise, the sample left as it was.
        if (ours !== sample) expect(JSON.stringify(ours)).not.toBe(JSON.stringify(sample));
      }
      expect(plain).toBeGreaterThan(100);
      expect(reordered).toBeGreaterThan(5);
      // A 2026 server's stamp is plain on a 2026 connection; no `_meta` is on a 2025 one.
      if (era === "modern") expect(stamped).toBeGreaterThan(20);
      else expect(stamped).toBe(0);
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
      expect(plainCallResult(SAMPLES[23], era)).toBeUndefined();
      expect(plainCallResult(SAMPLES[25], era)).toBeUndefined();
      expect(plainCallResult({ content: [{ type: "text", text: "a", more: 1 }] }, era)).toBeUndefined();
      // Keys out of the schema's order come back in it.
      expect(JSON.stringify(plainCallResult({ isError: true, content: [] }, era))).toBe(
        '{"content":[],"isError":true}',
      );
    }
    // A 2025 schema rebuilds structuredContent as a record, dropping a `__proto__` key; a 2026 one keeps it as sent.
    expect(plainCallResult(SAMPLES[24], "legacy")).toBeUndefined();
    // A 2026 server's stamp, which it writes last, is written first; a 2025 result's `_meta` is the schema's.
    const stamp = { [SERVER_INFO]: { name: "s", version: "1" } };
    const text = [{ type: "text", text: "a" }];
    expect(Object.keys(plainCallResult({ content: text, _meta: stamp }, "modern")!)).toEqual([
      "_meta",
      "content",
    ]);
    expect(plainCallResult({ content: text, _meta: stamp }, "legacy")).toBeUndefined();
  });
});
