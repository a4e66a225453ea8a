import { describe, expect, test } from "bun:test";
import { Server } from "@modelcontextprotocol/server";
import { seededRandom } from "../../tests/helpers.ts";
import { checkEnvelopesOnce, isSameJson, smallCopy } from "./checked-envelopes.ts";

type Check = (material: { envelope?: unknown }) => string | undefined;

/** A server pinned to 2026-07-28 (as serveStdio pins it), and its codec's check: the SDK's, or ours. */
function codecCheck(isOnce: boolean): { check: Check; schemaChecks: () => number } {
  const server = new Server({ name: "s", version: "1" }, { capabilities: { tools: {} } });
  const internals = server as unknown as {
    _negotiatedProtocolVersion: string;
    _negotiatedWireCodec(): { checkInboundEnvelope: Check };
  };
  internals._negotiatedProtocolVersion = "2026-07-28";
  const sdk = internals._negotiatedWireCodec();
  let schemaChecks = 0;
  const original = sdk.checkInboundEnvelope;
  // Counted on the SDK's own codec object, so the count sees every time its schema is asked.
  const counting = Object.create(sdk) as { checkInboundEnvelope: Check };
  counting.checkInboundEnvelope = (material) => {
    schemaChecks++;
    return original.call(sdk, material);
  };
  internals._negotiatedWireCodec = () => counting;
  if (isOnce) checkEnvelopesOnce(server);
  return {
    check: (material) => internals._negotiatedWireCodec().checkInboundEnvelope(material),
    schemaChecks: () => schemaChecks,
  };
}

const VERSION = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
const INFO = "io.modelcontextprotocol/clientInfo";
const LEVEL = "io.modelcontextprotocol/logLevel";

/** Envelopes as clients and attackers write them: mostly the same few, some broken in one place. */
function envelopes(count: number): unknown[] {
  const random = seededRandom(36);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const good = [
    { [VERSION]: "2026-07-28", [CAPABILITIES]: {} },
    { [VERSION]: "2026-07-28", [CAPABILITIES]: { sampling: {}, elicitation: { form: {} } } },
    { [CAPABILITIES]: { roots: {} }, [VERSION]: "2026-07-28", [INFO]: { name: "c", version: "1" } },
    { [VERSION]: "2026-07-28", [CAPABILITIES]: {}, [LEVEL]: "info" },
  ];
  const odd: unknown[] = [
    undefined,
    5,
    [],
    "x",
    { [VERSION]: 2026, [CAPABILITIES]: {} },
    { [VERSION]: "2026-07-28", [CAPABILITIES]: [] },
    { [VERSION]: "2026-07-28", [CAPABILITIES]: { sampling: 1 } },
    { [VERSION]: "2026-07-28", [CAPABILITIES]: {}, [LEVEL]: "loud" },
    { [VERSION]: "2026-07-28", [CAPABILITIES]: {}, [INFO]: { name: 1 } },
    JSON.parse(`{"${VERSION}":"2026-07-28","${CAPABILITIES}":{},"__proto__":{"x":1}}`),
    {},
  ];
  const out: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const base = random() < 0.8 ? pick(good) : pick(odd);
    // A copy, as each request's line is parsed anew.
    out.push(base === undefined ? undefined : JSON.parse(JSON.stringify(base)));
  }
  return out;
}

describe("a 2026 request's envelope is checked by the schema once in a row", () => {
  test("every envelope gets the SDK's own answer, and a repeated one skips the schema", () => {
    const sdk = codecCheck(false);
    const once = codecCheck(true);
    const sequence = envelopes(3000);
    let refusals = 0;
    for (const envelope of sequence) {
      const material = envelope === undefined ? {} : { envelope };
      const expected = sdk.check(material);
      if (expected !== undefined) refusals++;
      expect(once.check(material)).toBe(expected);
    }
    expect(refusals).toBeGreaterThan(100);
    expect(sdk.schemaChecks()).toBe(sequence.length);
    // Runs of one envelope are checked once: far fewer schema checks than requests.
    expect(once.schemaChecks()).toBeLessThan(sequence.length * 0.9);
  });

  test("an envelope changed after it passed is checked again", () => {
    const once = codecCheck(true);
    const envelope: Record<string, unknown> = { [VERSION]: "2026-07-28", [CAPABILITIES]: {} };
    expect(once.check({ envelope })).toBeUndefined();
    envelope[CAPABILITIES] = "none";
    expect(once.check({ envelope })).toBeString();
    expect(once.schemaChecks()).toBe(2);
  });

  test("a large envelope passes each time by the schema, and is not kept", () => {
    const once = codecCheck(true);
    const envelope = { [VERSION]: "2026-07-28", [CAPABILITIES]: {}, padding: "x".repeat(100_000) };
    for (let i = 0; i < 3; i++) expect(once.check({ envelope: structuredClone(envelope) })).toBeUndefined();
    expect(once.schemaChecks()).toBe(3);
    expect(smallCopy(envelope)).toBeUndefined();
    expect(smallCopy({ many: Array.from({ length: 300 }, (_, i) => i) })).toBeUndefined();
    expect(smallCopy(JSON.parse('{"__proto__":{"a":1}}'))).toBeUndefined();
    expect(smallCopy({ a: [1, "b", null, { c: true }] })).toEqual({ a: [1, "b", null, { c: true }] });
  });

  test("JSON values are the same key for key, in any key order, and nothing else is", () => {
    expect(isSameJson({ a: [1, { b: "x" }], c: null }, { c: null, a: [1, { b: "x" }] })).toBe(true);
    expect(isSameJson({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(isSameJson({ a: [1] }, { a: { 0: 1 } })).toBe(false);
    expect(isSameJson({ a: "1" }, { a: 1 })).toBe(false);
    expect(isSameJson(JSON.parse('{"__proto__":{"a":1}}'), { a: 1 })).toBe(false);
    let deep: unknown = {};
    for (let i = 0; i < 40; i++) deep = { d: deep };
    expect(isSameJson(deep, structuredClone(deep))).toBe(false);
  });
});
