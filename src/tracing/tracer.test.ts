import { expect, test } from "bun:test";
import { createTracer, type FinishedSpan, OUTCOME } from "./tracer.ts";

test("the tracer follows the parent's sampled flag, and keeps its sampleRatio of the traces that start here", () => {
  const exported: FinishedSpan[] = [];
  const none = createTracer({ sampleRatio: 0, export: (s) => exported.push(s) });
  const all = createTracer({ sampleRatio: 1, export: (s) => exported.push(s) });
  const parent = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" };
  for (let i = 0; i < 50; i++) none.startSpan("root", { kind: "server" }).end();
  expect(exported).toHaveLength(0);
  const child = none.startSpan("child of a sampled client", {
    kind: "server",
    parent: { ...parent, isSampled: true },
  });
  child.end();
  expect(exported.map((s) => [s.name, s.traceId, s.parentSpanId])).toEqual([
    ["child of a sampled client", parent.traceId, parent.spanId],
  ]);
  const skipped = all.startSpan("unsampled client", {
    kind: "server",
    parent: { ...parent, isSampled: false },
  });
  skipped.end();
  expect(exported).toHaveLength(1);
  // Not recorded, yet it has a context of its own to send upstream, flagged not sampled.
  expect(skipped.context).toMatchObject({ traceId: parent.traceId, isSampled: false });
  expect(skipped.context.spanId).not.toBe(parent.spanId);

  const half = createTracer({ sampleRatio: 0.5, export: (s) => exported.push(s) });
  exported.length = 0;
  for (let i = 0; i < 2000; i++) half.startSpan("root", { kind: "server" }).end();
  expect(exported.length).toBeGreaterThan(800);
  expect(exported.length).toBeLessThan(1200);
});

test("a span ends once; a failed outcome sets the error status and error.type", () => {
  const exported: FinishedSpan[] = [];
  const tracer = createTracer({ sampleRatio: 1, export: (s) => exported.push(s) });
  const failed = tracer.startSpan("tools/call x", { kind: "client", attributes: { a: 1 } });
  failed.set(OUTCOME, "isError");
  failed.end();
  failed.end();
  const timedOut = tracer.startSpan("tools/call y", { kind: "client" });
  timedOut.set(OUTCOME, "timeout");
  timedOut.end();
  const fine = tracer.startSpan("tools/call z", { kind: "client" });
  fine.set(OUTCOME, "ok");
  fine.end();
  expect(exported.map((s) => [s.isError, s.attributes["error.type"]])).toEqual([
    [true, "tool_error"],
    [true, "timeout"],
    [false, undefined],
  ]);
  expect(exported[0]?.attributes.a).toBe(1);
  expect(exported[0]!.endMs).toBeGreaterThanOrEqual(exported[0]!.startMs);
  expect(exported[1]?.parentSpanId).toBeUndefined();
});
