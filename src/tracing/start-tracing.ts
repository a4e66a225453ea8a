import type { ResolvedTraces } from "../config/trace-config.ts";
import type { Logger } from "../log.ts";
import { VERSION } from "../version.ts";
import type { OtlpExporter } from "./otlp-exporter.ts";
import type { Tracer } from "./tracer.ts";

/**
 * The tracer of a running proxy and its exporter, or undefined while traces are off (the default);
 * their modules are loaded only when traces are on.
 */
export async function startTracing(
  traces: ResolvedTraces,
  logger: Logger,
): Promise<{ tracer: Tracer; exporter: OtlpExporter } | undefined> {
  if (!traces.enabled) return undefined;
  const [{ createOtlpExporter }, { createTracer }] = await Promise.all([
    import("./otlp-exporter.ts"),
    import("./tracer.ts"),
  ]);
  const exporter = createOtlpExporter({
    endpoint: traces.endpoint,
    headers: traces.headers,
    serviceName: traces.serviceName,
    serviceVersion: VERSION,
    batchSize: traces.batchSize,
    batchDelayMs: traces.batchDelayMs,
    maxQueueSize: traces.maxQueueSize,
    timeoutMs: traces.timeoutMs,
    logger,
  });
  const tracer = createTracer({ sampleRatio: traces.sampleRatio, export: (span) => exporter.export(span) });
  logger.info(
    `exporting spans over OTLP/HTTP to ${new URL(traces.endpoint).origin} as ${traces.serviceName}` +
      (traces.sampleRatio < 1 ? ` (${traces.sampleRatio * 100}% of the traces that start here)` : ""),
  );
  return { tracer, exporter };
}
