import { newSpanId, newTraceId, type SpanContext } from "./trace-context.ts";

/**
 * The proxy's spans: started with a parent (the client's, from its trace context, or one of the
 * proxy's own), given attributes, ended once, and handed to the exporter when sampled. Sampling
 * follows the parent's sampled flag (OpenTelemetry's ParentBased sampler); a trace that starts here
 * is kept with probability `sampleRatio`, decided from its trace id. A span that is not sampled
 * still has a context of its own, so what goes upstream says "not sampled" consistently.
 */
export type SpanKind = "server" | "client";
export type AttributeValue = string | number | boolean;

/**
 * What became of the work a span covers: a forwarded call's five outcomes (as the call statistics
 * count them), and `input_required` for a 2026-07-28 round that asks the client for input.
 */
export type SpanOutcome = "ok" | "isError" | "error" | "timeout" | "limited" | "input_required";

/** The attribute that holds the outcome; `end` derives the status and `error.type` from it. */
export const OUTCOME = "mcpproxy.outcome";

export interface Span {
  readonly context: SpanContext;
  set(key: string, value: AttributeValue): void;
  has(key: string): boolean;
  /** Ends the span (the first call only) and queues it for export when sampled. */
  end(): void;
}

/** A span as it is exported. Times are ms since the epoch, fractional. */
export interface FinishedSpan {
  name: string;
  kind: SpanKind;
  traceId: string;
  spanId: string;
  parentSpanId?: string | undefined;
  traceState?: string | undefined;
  startMs: number;
  endMs: number;
  attributes: Record<string, AttributeValue>;
  isError: boolean;
}

interface SpanOptions {
  kind: SpanKind;
  parent?: SpanContext | undefined;
  attributes?: Record<string, AttributeValue> | undefined;
}

export interface Tracer {
  startSpan(name: string, options: SpanOptions): Span;
}

/** Outcomes that mark a span as failed (status ERROR, `error.type` set). */
const FAILED = new Set<AttributeValue>(["isError", "error", "timeout", "limited"]);

/** The clock: wall time at fine resolution, monotonic within the run. */
const nowMs = () => performance.timeOrigin + performance.now();

export function createTracer(options: {
  /** Traces that start here: the share kept, 0 to 1. */
  sampleRatio: number;
  export(span: FinishedSpan): void;
}): Tracer {
  const threshold = Math.floor(options.sampleRatio * 0x1_0000_0000);
  const isKept = (traceId: string) => Number.parseInt(traceId.slice(-8), 16) < threshold;
  return {
    startSpan(name, { kind, parent, attributes }) {
      const traceId = parent?.traceId ?? newTraceId();
      const context: SpanContext = {
        traceId,
        spanId: newSpanId(),
        isSampled: parent ? parent.isSampled : isKept(traceId),
        ...(parent?.traceState ? { traceState: parent.traceState } : {}),
      };
      if (!context.isSampled) return unsampled(context);
      const startMs = nowMs();
      const recorded: Record<string, AttributeValue> = { ...attributes };
      let isEnded = false;
      return {
        context,
        set(key, value) {
          recorded[key] = value;
        },
        has: (key) => key in recorded,
        end() {
          if (isEnded) return;
          isEnded = true;
          const outcome = recorded[OUTCOME];
          const isError = outcome !== undefined && FAILED.has(outcome);
          if (isError && !("error.type" in recorded))
            recorded["error.type"] = outcome === "isError" ? "tool_error" : String(outcome);
          options.export({
            name,
            kind,
            traceId,
            spanId: context.spanId,
            ...(parent ? { parentSpanId: parent.spanId } : {}),
            ...(context.traceState ? { traceState: context.traceState } : {}),
            startMs,
            endMs: nowMs(),
            attributes: recorded,
            isError,
          });
        },
      };
    },
  };
}

/** A span that records nothing: its context still goes upstream, flagged not sampled. */
function unsampled(context: SpanContext): Span {
  return { context, set() {}, has: () => false, end() {} };
}
