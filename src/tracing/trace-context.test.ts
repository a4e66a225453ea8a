import { describe, expect, test } from "bun:test";
import {
  boundTraceState,
  formatTraceparent,
  MAX_TRACESTATE_CHARS,
  newSpanId,
  newTraceId,
  parseTraceparent,
  remoteParent,
  traceHeaders,
} from "./trace-context.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

describe("parseTraceparent", () => {
  test("reads a version 00 traceparent and its sampled flag", () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      isSampled: true,
    });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)?.isSampled).toBe(false);
    // Only bit 0 is the sampled flag; others are for later versions of the spec.
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-03`)?.isSampled).toBe(true);
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-02`)?.isSampled).toBe(false);
  });

  test("reads the first four fields of a later version, which may add more after a dash", () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-more-fields`)?.traceId).toBe(TRACE);
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01`)?.spanId).toBe(SPAN);
  });

  test("ignores every malformed value whole", () => {
    for (const bad of [
      `00-${TRACE.toUpperCase()}-${SPAN}-01`,
      `00-${"0".repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${"0".repeat(16)}-01`,
      `ff-${TRACE}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-01-extra`,
      `00-${TRACE}-${SPAN}-1`,
      `00-${TRACE.slice(1)}-${SPAN}-01`,
      `00_${TRACE}_${SPAN}_01`,
      ` 00-${TRACE}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-zz`,
      `01-${TRACE}-${SPAN}-01${"x".repeat(10)}`,
      `01-${TRACE}-${SPAN}-01-${"x".repeat(300)}`,
      `00-${TRACE}-${SPAN}-01\n`,
      "",
      "garbage",
    ]) {
      expect(parseTraceparent(bad)).toBeUndefined();
    }
    for (const notText of [undefined, null, 42, { traceId: TRACE }, [`00-${TRACE}-${SPAN}-01`]]) {
      expect(parseTraceparent(notText)).toBeUndefined();
    }
  });

  test("formats what it reads back to the same text (version 00)", () => {
    const text = `00-${TRACE}-${SPAN}-01`;
    expect(formatTraceparent(parseTraceparent(text)!)).toBe(text);
    expect(formatTraceparent({ traceId: TRACE, spanId: SPAN, isSampled: false })).toBe(
      `00-${TRACE}-${SPAN}-00`,
    );
  });
});

describe("boundTraceState", () => {
  test("keeps a valid list, dropping empty members and the spaces around members", () => {
    expect(boundTraceState("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE,,")).toBe(
      "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
    );
    expect(boundTraceState("tenant@vendor=value")).toBe("tenant@vendor=value");
  });

  test("drops a list that breaks the grammar whole", () => {
    for (const bad of [
      "Upper=1",
      "a=1,a=2",
      "novalue",
      "=value",
      "key=val,ue=x=y",
      "key=has\ttab",
      "key=é",
      "key=line\nbreak",
      Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(","),
    ]) {
      expect(boundTraceState(bad)).toBeUndefined();
    }
    expect(boundTraceState(42)).toBeUndefined();
    expect(boundTraceState("k=v,".repeat(5_000))).toBeUndefined();
  });

  test("cuts a long list to 512 characters: members over 128 characters go first, then from the end", () => {
    const long = `big=${"x".repeat(200)}`;
    const members = Array.from({ length: 30 }, (_, i) => `k${String(i).padStart(2, "0")}=${"v".repeat(20)}`);
    const cut = boundTraceState([members[0], long, ...members.slice(1)].join(","))!;
    expect(cut.length).toBeLessThanOrEqual(MAX_TRACESTATE_CHARS);
    expect(cut).not.toContain("big=");
    expect(cut.startsWith(`${members[0]},${members[1]}`)).toBe(true);
    expect(cut.split(",").every((member) => members.includes(member))).toBe(true);
    // Within the bound, a long member stays.
    expect(boundTraceState(long)).toBe(long);
  });
});

describe("remoteParent", () => {
  const parent = `00-${TRACE}-${SPAN}-01`;
  test("takes the first carrier with a valid traceparent, with that carrier's tracestate", () => {
    const other = `00-${"1".repeat(32)}-${"2".repeat(16)}-00`;
    expect(remoteParent([{ traceparent: parent, tracestate: "a=1" }, { traceparent: other }])).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      isSampled: true,
      traceState: "a=1",
    });
    // A malformed one in `_meta` does not hide a good header.
    expect(remoteParent([{ traceparent: "junk", tracestate: "a=1" }, { traceparent: other }])).toEqual({
      traceId: "1".repeat(32),
      spanId: "2".repeat(16),
      isSampled: false,
    });
  });

  test("without a valid traceparent there is no parent, whatever the tracestate", () => {
    expect(remoteParent([undefined, { tracestate: "a=1" }, { traceparent: "00-x" }])).toBeUndefined();
  });

  test("a tracestate that does not parse is left out, the traceparent kept", () => {
    expect(remoteParent([{ traceparent: parent, tracestate: "BAD KEY=1" }])?.traceState).toBeUndefined();
  });
});

test("traceHeaders carries the tracestate only when there is one", () => {
  expect(traceHeaders({ traceId: TRACE, spanId: SPAN, isSampled: true })).toEqual({
    traceparent: `00-${TRACE}-${SPAN}-01`,
  });
  expect(traceHeaders({ traceId: TRACE, spanId: SPAN, isSampled: false, traceState: "a=1" })).toEqual({
    traceparent: `00-${TRACE}-${SPAN}-00`,
    tracestate: "a=1",
  });
});

test("new ids are random lowercase hex of the right length", () => {
  const traces = new Set(Array.from({ length: 100 }, newTraceId));
  const spans = new Set(Array.from({ length: 100 }, newSpanId));
  expect(traces.size).toBe(100);
  expect(spans.size).toBe(100);
  for (const id of traces) expect(id).toMatch(/^[0-9a-f]{32}$/);
  for (const id of spans) expect(id).toMatch(/^[0-9a-f]{16}$/);
});
