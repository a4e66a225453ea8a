import { expect, test } from "bun:test";
import { encodeSpans, unixNanos } from "./otlp-json.ts";
import type { FinishedSpan } from "./tracer.ts";

const RESOURCE = { serviceName: "mcpproxy-test", serviceVersion: "9.9.9" };

function span(overrides: Partial<FinishedSpan> = {}): FinishedSpan {
  return {
    name: "tools/call echo",
    kind: "client",
    traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
    spanId: "00f067aa0ba902b7",
    parentSpanId: "1111111111111111",
    startMs: 1_700_000_000_000.25,
    endMs: 1_700_000_000_001.5,
    attributes: { "mcp.method.name": "tools/call", "mcpproxy.queue.wait_ms": 0, ratio: 0.5, flag: true },
    isError: false,
    ...overrides,
  };
}

test("nanoseconds since the epoch are exact decimal strings, past what a double holds as an integer", () => {
  expect(unixNanos(1_700_000_000_000)).toBe("1700000000000000000");
  expect(unixNanos(1_700_000_000_000.25)).toBe("1700000000000250000");
  expect(unixNanos(1_700_000_000_123.125)).toBe("1700000000123125000");
  // The naive product rounds to a double: its last digits are not the time.
  expect(String(BigInt(1_700_000_000_123.125 * 1e6))).not.toBe("1700000000123125000");
  expect(unixNanos(0)).toBe("0");
});

test("spans are encoded as OTLP JSON: hex ids, numeric kinds, string times, typed attribute values", () => {
  const body = encodeSpans(RESOURCE, [
    span(),
    span({ kind: "server", parentSpanId: undefined, isError: true }),
  ]);
  const [resource] = body.resourceSpans;
  expect(resource?.resource.attributes).toEqual([
    { key: "service.name", value: { stringValue: "mcpproxy-test" } },
    { key: "service.version", value: { stringValue: "9.9.9" } },
  ]);
  const [scoped] = resource!.scopeSpans;
  expect(scoped?.scope).toEqual({ name: "mcpproxy", version: "9.9.9" });
  const [client, server] = scoped!.spans;
  expect(client).toEqual({
    traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
    spanId: "00f067aa0ba902b7",
    parentSpanId: "1111111111111111",
    name: "tools/call echo",
    kind: 3,
    startTimeUnixNano: "1700000000000250000",
    endTimeUnixNano: "1700000000001500000",
    attributes: [
      { key: "mcp.method.name", value: { stringValue: "tools/call" } },
      { key: "mcpproxy.queue.wait_ms", value: { intValue: "0" } },
      { key: "ratio", value: { doubleValue: 0.5 } },
      { key: "flag", value: { boolValue: true } },
    ],
    status: {},
  });
  expect(server?.kind).toBe(2);
  expect(server?.status).toEqual({ code: 2 });
  expect("parentSpanId" in server!).toBe(false);
  // It is plain JSON: what is posted is exactly this.
  expect(JSON.parse(JSON.stringify(body))).toEqual(body);
});

test("a span's end is never before its start in the encoding", () => {
  const [encoded] = encodeSpans(RESOURCE, [span({ endMs: 1_699_999_999_999 })]).resourceSpans[0]!
    .scopeSpans[0]!.spans;
  expect(encoded?.endTimeUnixNano).toBe(encoded?.startTimeUnixNano);
});
