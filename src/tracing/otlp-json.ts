import type { AttributeValue, FinishedSpan, SpanKind } from "./tracer.ts";

/**
 * Spans in the OTLP/HTTP JSON encoding (opentelemetry-proto, ExportTraceServiceRequest): ids as
 * hex strings (the JSON mapping's exception to base64), 64-bit integers and nanosecond times as
 * decimal strings, enums as their numbers.
 */
export interface ExportResource {
  serviceName: string;
  serviceVersion: string;
}

/** SPAN_KIND_SERVER = 2, SPAN_KIND_CLIENT = 3. */
const KINDS: Record<SpanKind, number> = { server: 2, client: 3 };
/** STATUS_CODE_UNSET = 0 (a success, as instrumentations leave it), STATUS_CODE_ERROR = 2. */
const STATUS_ERROR = 2;

const SCOPE_NAME = "mcpproxy";

export function encodeSpans(resource: ExportResource, spans: readonly FinishedSpan[]) {
  return {
    resourceSpans: [
      {
        resource: {
          attributes: encodeAttributes({
            "service.name": resource.serviceName,
            "service.version": resource.serviceVersion,
          }),
        },
        scopeSpans: [
          {
            scope: { name: SCOPE_NAME, version: resource.serviceVersion },
            spans: spans.map(encodeSpan),
          },
        ],
      },
    ],
  };
}

function encodeSpan(span: FinishedSpan) {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
    ...(span.traceState ? { traceState: span.traceState } : {}),
    name: span.name,
    kind: KINDS[span.kind],
    startTimeUnixNano: unixNanos(span.startMs),
    endTimeUnixNano: unixNanos(Math.max(span.startMs, span.endMs)),
    attributes: encodeAttributes(span.attributes),
    status: span.isError ? { code: STATUS_ERROR } : {},
  };
}

function encodeAttributes(attributes: Readonly<Record<string, AttributeValue>>) {
  return Object.entries(attributes).map(([key, value]) => ({ key, value: anyValue(value) }));
}

function anyValue(value: AttributeValue) {
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  return Number.isSafeInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}

/**
 * Milliseconds since the epoch (fractional) as the decimal string of nanoseconds: exact to the
 * nanosecond a double holds, which a plain `ms * 1e6` (past 2^53) would not be.
 */
export function unixNanos(ms: number): string {
  const whole = Math.floor(ms);
  const fraction = Math.round((ms - whole) * 1e6);
  return (BigInt(whole) * 1_000_000n + BigInt(fraction)).toString();
}
