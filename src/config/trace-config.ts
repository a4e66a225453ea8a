import * as v from "valibot";
import type { ExpansionProblem } from "./expand-env.ts";
import { unknownKeys } from "./known-keys.ts";
import type { ResolveTable } from "./search-config.ts";
import { booleanLike, fraction, httpUrl, intInRange, nonEmptyString } from "./value-schemas.ts";

/**
 * `mcpproxy.traces`: OpenTelemetry spans of searches and forwarded calls, exported over OTLP/HTTP
 * (src/tracing/). Off unless `enabled`. The keys follow the OpenTelemetry SDK's environment
 * variables where one exists, so a collector set up for other programs is pointed at the same way;
 * the signal's own variables (OTEL_EXPORTER_OTLP_TRACES_*) win over the file, the shared ones
 * (OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, _TIMEOUT) only fill in what the file leaves out.
 */
export interface ResolvedTraces {
  enabled: boolean;
  /** The collector's traces URL (…/v1/traces), posted OTLP JSON. */
  endpoint: string;
  /** Sent with every export (a collector's auth); values come from the environment. */
  headers: Readonly<Record<string, string>>;
  serviceName: string;
  /** The share of traces that start at the proxy which are kept (a client's sampled flag decides its own). */
  sampleRatio: number;
  batchSize: number;
  batchDelayMs: number;
  maxQueueSize: number;
  timeoutMs: number;
}

/** The OpenTelemetry SDK's own defaults (OTEL_BSP_*, the OTLP/HTTP port 4318), a 10 s export timeout. */
export const TRACE_DEFAULTS: ResolvedTraces = {
  enabled: false,
  endpoint: "http://localhost:4318/v1/traces",
  headers: {},
  serviceName: "mcpproxy",
  sampleRatio: 1,
  batchSize: 512,
  batchDelayMs: 5_000,
  maxQueueSize: 2_048,
  timeoutMs: 10_000,
};

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Bytes a header may hold, no control character but tab: one that fetch refuses would fail every export. */
const isHeaderValue = (value: string) =>
  [...value].every((char) => char === "\t" || (char >= " " && char !== "\x7f" && char <= "\xff"));

/** Headers as an object (the file) or `name=value,name=value` with %-encoded values (OTEL_*_HEADERS). */
const headersSchema = v.pipe(
  v.union(
    [v.string(), v.record(v.string(), v.string())],
    'must be an object of header values, or "name=value,name=value"',
  ),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const entries: [string, string][] = [];
    if (typeof dataset.value !== "string") entries.push(...Object.entries(dataset.value));
    else {
      for (const part of dataset.value.split(",")) {
        if (part.trim() === "") continue;
        const equals = part.indexOf("=");
        let value: string | undefined;
        try {
          value = equals > 0 ? decodeURIComponent(part.slice(equals + 1).trim()) : undefined;
        } catch {}
        if (value === undefined) {
          addIssue({ message: 'must be "name=value" pairs separated by commas, values %-encoded' });
          return NEVER;
        }
        entries.push([part.slice(0, equals).trim(), value]);
      }
    }
    for (const [name, value] of entries) {
      if (!HEADER_NAME.test(name) || !isHeaderValue(value)) {
        addIssue({ message: `holds a header that cannot be sent (${JSON.stringify(name)})` });
        return NEVER;
      }
    }
    return Object.fromEntries(entries);
  }),
);

const otlpEndpoint = v.pipe(
  httpUrl,
  v.check((url) => /^https?:\/\//i.test(url), "must be an http:// or https:// URL (OTLP/HTTP)"),
);

/** The `mcpproxy.traces` keys: file key, environment variable, schema (as SETTINGS in settings-schema.ts). */
const TRACE_SETTINGS = {
  enabled: { env: "MCPPROXY_TRACES", schema: booleanLike },
  endpoint: { env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", schema: otlpEndpoint },
  headers: { env: "OTEL_EXPORTER_OTLP_TRACES_HEADERS", schema: headersSchema },
  serviceName: { env: "OTEL_SERVICE_NAME", schema: nonEmptyString },
  sampleRatio: { env: "OTEL_TRACES_SAMPLER_ARG", schema: fraction },
  batchSize: { env: "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", schema: intInRange(1, 10_000) },
  batchDelayMs: { env: "OTEL_BSP_SCHEDULE_DELAY", schema: intInRange(10, 600_000) },
  maxQueueSize: { env: "OTEL_BSP_MAX_QUEUE_SIZE", schema: intInRange(1, 100_000) },
  timeoutMs: { env: "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", schema: intInRange(100, 120_000) },
} as const;

/** The variables every OpenTelemetry SDK of the environment reads: below the file. */
const SHARED = {
  endpoint: {
    env: "OTEL_EXPORTER_OTLP_ENDPOINT",
    // The shared endpoint is the collector's base URL; each signal appends its own path.
    read: (value: string) => `${value.replace(/\/+$/, "")}/v1/traces`,
  },
  headers: { env: "OTEL_EXPORTER_OTLP_HEADERS", read: (value: string) => value },
  timeoutMs: { env: "OTEL_EXPORTER_OTLP_TIMEOUT", read: (value: string) => value },
} as const;

/** Header names that carry secrets: in the file, their values must come from the environment. */
const SECRET_HEADER = /authorization|api[-_]?key|token|secret|password/i;

export function resolveTraces(
  input: { raw: unknown; env: Readonly<Record<string, string | undefined>>; resolve: ResolveTable },
  problems: ExpansionProblem[],
): ResolvedTraces {
  const section = objectAt(input.raw, problems);
  problems.push(...unknownKeys(section, Object.keys(TRACE_SETTINGS), "mcpproxy.traces"));
  const resolved: Record<string, unknown> = { ...TRACE_DEFAULTS };
  for (const [key, shared] of Object.entries(SHARED)) {
    const value = input.env[shared.env];
    if (value === undefined || value === "") continue;
    const parsed = v.safeParse(TRACE_SETTINGS[key as keyof typeof SHARED].schema, shared.read(value));
    if (parsed.success) resolved[key] = parsed.output;
    else
      problems.push({ path: shared.env, message: parsed.issues[0]?.message ?? "is invalid", source: "env" });
  }
  problems.push(...literalSecrets(section.headers));
  input.resolve(TRACE_SETTINGS, section, "mcpproxy.traces", {}, resolved);
  const traces = resolved as unknown as ResolvedTraces;
  if (traces.batchSize > traces.maxQueueSize) {
    problems.push({
      path: "mcpproxy.traces.batchSize",
      message: `is ${traces.batchSize}, more than maxQueueSize (${traces.maxQueueSize}): a batch is taken from the queue`,
    });
  }
  return { ...traces, headers: Object.freeze({ ...traces.headers }) };
}

/** A secret written into the file would sit there in clear: `${VAR}` names the variable that holds it. */
function literalSecrets(headers: unknown): ExpansionProblem[] {
  if (!headers || typeof headers !== "object" || Array.isArray(headers)) return [];
  return Object.entries(headers as Record<string, unknown>)
    .filter(([name, value]) => SECRET_HEADER.test(name) && typeof value === "string" && !value.includes("${"))
    .map(([name]) => ({
      path: `mcpproxy.traces.headers.${name}`,
      message:
        "holds a secret written into the config file: put it in an environment variable and write " +
        '"${VARIABLE}" here (or "Bearer ${VARIABLE}"), or set OTEL_EXPORTER_OTLP_TRACES_HEADERS',
    }));
}

function objectAt(raw: unknown, problems: ExpansionProblem[]): Record<string, unknown> {
  if (raw === undefined) return {};
  if (raw !== null && typeof raw === "object" && !Array.isArray(raw)) return raw as Record<string, unknown>;
  problems.push({ path: "mcpproxy.traces", message: "must be an object of settings" });
  return {};
}
