import type { Logger } from "../log.ts";
import { type ExportResource, encodeSpans } from "./otlp-json.ts";
import type { FinishedSpan } from "./tracer.ts";

/**
 * Finished spans, batched and posted as OTLP JSON to a collector's /v1/traces. Exporting must never
 * slow or fail a call: a span is queued in O(1) and the queue is bounded (one more is dropped), at
 * most one export is in flight, each has a timeout, and a batch that fails is dropped, not retried:
 * a collector that is down costs one attempt a batch interval, never a storm. Dropped spans are
 * counted and said in a warning (the first at once, then at most one a minute). `close` sends what
 * is queued: it waits for the export in flight, then sends the rest while exports succeed, for
 * one export timeout more at most.
 */
export interface OtlpExporterOptions extends ExportResource {
  endpoint: string;
  headers: Readonly<Record<string, string>>;
  /** The most spans in one export. */
  batchSize: number;
  /** How often the queue is sent, in ms (sooner when a batch is full). */
  batchDelayMs: number;
  /** The most spans waiting; one more is dropped. */
  maxQueueSize: number;
  /** How long one export may take, in ms. */
  timeoutMs: number;
  logger: Logger;
}

export interface OtlpExporter {
  export(span: FinishedSpan): void;
  /** What was sent and what was lost so far. */
  counts(): { exported: number; dropped: number };
  /** Stops the timer and sends what is queued (bounded by `timeoutMs`); later spans are dropped. */
  close(): Promise<void>;
}

/** At most one warning about dropped spans a minute (the first is said at once). */
const WARN_EVERY_MS = 60_000;

export function createOtlpExporter(options: OtlpExporterOptions): OtlpExporter {
  const queue: FinishedSpan[] = [];
  let sending: Promise<void> | undefined;
  let isClosed = false;
  let exported = 0;
  let dropped = 0;
  let told = 0;
  let lastWarned = Number.NEGATIVE_INFINITY;
  let lastProblem = "";
  /** Exports that failed (the collector's fault, not a full queue). */
  let failures = 0;
  // Only the origin is ever logged: the endpoint may carry credentials in its user part or query.
  const collector = originOf(options.endpoint);

  const warn = (isFinal = false) => {
    const now = performance.now();
    if (dropped === told || (!isFinal && now - lastWarned < WARN_EVERY_MS)) return;
    lastWarned = now;
    options.logger.warn(
      `${dropped - told} span${dropped - told === 1 ? "" : "s"} dropped (${dropped} in all since the start): ` +
        `${lastProblem}. Calls are not affected; check that the collector at ${collector} is running.`,
    );
    told = dropped;
  };
  const drop = (count: number, problem: string) => {
    dropped += count;
    lastProblem = problem;
    warn();
  };

  const post = async (batch: FinishedSpan[]): Promise<void> => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), options.timeoutMs);
    try {
      const response = await fetch(options.endpoint, {
        method: "POST",
        headers: { ...options.headers, "content-type": "application/json" },
        body: JSON.stringify(encodeSpans(options, batch)),
        signal: controller.signal,
      });
      // Read to the end (the connection is then reused), and never shown: it is the collector's text.
      await response.arrayBuffer().catch(() => undefined);
      if (response.ok) exported += batch.length;
      else {
        failures++;
        drop(batch.length, `the collector answered HTTP ${response.status}`);
      }
    } catch (error) {
      failures++;
      drop(
        batch.length,
        controller.signal.aborted
          ? `the collector did not answer within ${options.timeoutMs} ms`
          : `the collector could not be reached (${failureName(error)})`,
      );
    } finally {
      clearTimeout(timer);
    }
  };

  /** Sends one batch unless one is in flight already. */
  const sendNext = (): Promise<void> => {
    if (sending) return sending;
    if (queue.length === 0) return Promise.resolve();
    sending = post(queue.splice(0, options.batchSize)).finally(() => {
      sending = undefined;
    });
    return sending;
  };

  const timer = setInterval(() => void sendNext(), options.batchDelayMs);
  timer.unref?.();

  return {
    export(span) {
      if (isClosed || queue.length >= options.maxQueueSize) {
        drop(1, isClosed ? "the proxy was stopping" : `the queue was full (${options.maxQueueSize} spans)`);
        return;
      }
      queue.push(span);
      if (queue.length >= options.batchSize && !sending) void sendNext();
    },
    counts: () => ({ exported, dropped }),
    async close() {
      if (isClosed) return;
      isClosed = true;
      clearInterval(timer);
      const deadline = performance.now() + options.timeoutMs;
      const failed = failures;
      await sending;
      // Once an export fails, what is left would only fail the same way, one timeout each.
      while (queue.length > 0 && failures === failed && performance.now() < deadline) await sendNext();
      if (queue.length > 0) drop(queue.splice(0).length, lastProblem || "the proxy was stopping");
      warn(true);
    },
  };
}

/** A fetch failure by its code or name only: its message may quote the URL, and with it a credential. */
function failureName(error: unknown): string {
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  return typeof code === "string" ? code : typeof name === "string" ? name : "unknown error";
}

function originOf(endpoint: string): string {
  try {
    return new URL(endpoint).origin;
  } catch {
    return "(the configured endpoint)";
  }
}
