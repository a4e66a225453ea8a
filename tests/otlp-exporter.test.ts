import { expect, setDefaultTimeout, test } from "bun:test";
import type { Logger } from "../src/log.ts";
import { createOtlpExporter, type OtlpExporterOptions } from "../src/tracing/otlp-exporter.ts";
import type { FinishedSpan } from "../src/tracing/tracer.ts";
import { type ReceiverMode, startOtlpReceiver } from "./fixtures/otlp-receiver.ts";
import { cleanupAfterEach, eventually, freePort } from "./helpers.ts";

// A loaded 2-core machine can be slow without anything being wrong: a generous bound, not 5 s.
setDefaultTimeout(60_000);

/** The batching exporter against a real OTLP receiver on 127.0.0.1 (tests/fixtures/otlp-receiver.ts). */
const scope = cleanupAfterEach();

function recordingLogger() {
  const warnings: string[] = [];
  const logger: Logger = {
    error() {},
    warn: (message) => void warnings.push(message),
    info() {},
    debug() {},
    child: () => logger,
    enabled: () => true,
  };
  return { logger, warnings };
}

let sequence = 0;
function span(): FinishedSpan {
  const n = ++sequence;
  return {
    name: `span ${n}`,
    kind: "client",
    traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
    spanId: n.toString(16).padStart(16, "0"),
    startMs: Date.now(),
    endMs: Date.now() + 1,
    attributes: { n },
    isError: false,
  };
}

function receiver(mode: ReceiverMode = "ok") {
  const started = startOtlpReceiver(mode);
  scope.defer(() => started.stop());
  return started;
}

function exporter(endpoint: string, options: Partial<OtlpExporterOptions> = {}) {
  const { logger, warnings } = recordingLogger();
  const made = createOtlpExporter({
    endpoint,
    headers: {},
    serviceName: "exporter-test",
    serviceVersion: "1",
    batchSize: 3,
    batchDelayMs: 50,
    maxQueueSize: 100,
    timeoutMs: 2_000,
    logger,
    ...options,
  });
  scope.defer(() => made.close());
  return { exporter: made, warnings };
}

test("spans are posted in batches of at most batchSize, with the configured headers", async () => {
  const collector = receiver();
  const { exporter: sink } = exporter(collector.url, { headers: { "x-scope": "team-a" } });
  for (let i = 0; i < 7; i++) sink.export(span());
  await eventually(
    () => sink.counts().exported,
    (count) => count === 7,
    10_000,
  );
  expect(collector.rejected).toEqual([]);
  expect(collector.requests.every((request) => request.spans <= 3)).toBe(true);
  expect(collector.requests[0]?.headers["x-scope"]).toBe("team-a");
  expect(collector.requests[0]?.contentType).toBe("application/json");
  expect(collector.spans.map((s) => s.service)).toEqual(Array(7).fill("exporter-test"));
  expect(sink.counts()).toEqual({ exported: 7, dropped: 0 });
});

test("a collector that hangs holds one export at a time; the queue stays bounded and the rest is dropped, counted", async () => {
  const collector = receiver("hang");
  const { exporter: sink, warnings } = exporter(collector.url, {
    batchSize: 5,
    maxQueueSize: 5,
    timeoutMs: 1_000,
  });
  for (let i = 0; i < 20; i++) sink.export(span());
  // Several batch intervals pass while the first export hangs: no second one is started.
  await Bun.sleep(300);
  expect(collector.maxOpen()).toBe(1);
  expect(collector.requests).toHaveLength(1);
  // 5 in flight, 5 queued, 10 dropped.
  expect(sink.counts()).toEqual({ exported: 0, dropped: 10 });
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toContain("1 span dropped");
  expect(warnings[0]).toContain("the queue was full (5 spans)");
  expect(warnings[0]).toContain("Calls are not affected");
});

test("a collector that is down costs one attempt a batch, dropped and warned about once a minute", async () => {
  const port = await freePort();
  const { exporter: sink, warnings } = exporter(`http://127.0.0.1:${port}/v1/traces`, { batchSize: 2 });
  for (let i = 0; i < 10; i++) {
    sink.export(span());
    await Bun.sleep(5);
  }
  const counts = await eventually(
    () => sink.counts(),
    (seen) => seen.dropped === 10,
    10_000,
  );
  expect(counts).toEqual({ exported: 0, dropped: 10 });
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toContain("the collector could not be reached");
  expect(warnings[0]).toContain(`http://127.0.0.1:${port}`);
});

test("an error answer drops the batch without a retry, and the warning never shows the collector's body", async () => {
  const collector = receiver("fail");
  const { exporter: sink, warnings } = exporter(collector.url, { batchSize: 1 });
  sink.export(span());
  await eventually(
    () => sink.counts().dropped,
    (dropped) => dropped === 1,
    10_000,
  );
  await Bun.sleep(200);
  expect(collector.requests).toHaveLength(1);
  expect(warnings[0]).toContain("the collector answered HTTP 503");
  expect(warnings.join("\n")).not.toContain("collector unavailable");
});

test("close sends what is queued, and later spans are dropped", async () => {
  const collector = receiver();
  const { exporter: sink, warnings } = exporter(collector.url, { batchSize: 2, batchDelayMs: 600_000 });
  sink.export(span());
  expect(collector.requests).toHaveLength(0);
  for (let i = 0; i < 4; i++) sink.export(span());
  await sink.close();
  expect(collector.spans).toHaveLength(5);
  sink.export(span());
  expect(sink.counts()).toEqual({ exported: 5, dropped: 1 });
  expect(warnings[0]).toContain("the proxy was stopping");
});

test("close ends even when the collector never answers: the queue is dropped after the export timeout", async () => {
  const collector = receiver("hang");
  const { exporter: sink } = exporter(collector.url, { batchSize: 2, batchDelayMs: 600_000, timeoutMs: 200 });
  for (let i = 0; i < 6; i++) sink.export(span());
  await sink.close();
  expect(sink.counts()).toEqual({ exported: 0, dropped: 6 });
  expect(collector.maxOpen()).toBe(1);
});
