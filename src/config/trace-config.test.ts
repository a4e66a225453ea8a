import { describe, expect, test } from "bun:test";
import { problemsOf } from "./config-test-support.ts";
import { parseConfig } from "./load-config.ts";
import { TRACE_DEFAULTS } from "./trace-config.ts";

const parse = (mcpproxy: unknown, env: Record<string, string> = {}) =>
  parseConfig({ mcpServers: {}, mcpproxy }, { configPath: "/cfg.json", env: { HOME: "/home/u", ...env } });

describe("mcpproxy.traces", () => {
  test("off by default, even where the environment names a collector for other programs", () => {
    expect(parse({}).traces).toEqual(TRACE_DEFAULTS);
    expect(
      parse({}, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:9/v1/traces" }).traces.enabled,
    ).toBe(false);
    expect(parse({ traces: { enabled: true } }).traces).toEqual({ ...TRACE_DEFAULTS, enabled: true });
    expect(parse({}, { MCPPROXY_TRACES: "1" }).traces.enabled).toBe(true);
  });

  test("every key from the file, and the OpenTelemetry variables over it", () => {
    const file = {
      enabled: true,
      endpoint: "https://collector.example/v1/traces",
      headers: { "x-scope": "team-a" },
      serviceName: "gateway",
      sampleRatio: 0.25,
      batchSize: 100,
      batchDelayMs: 1000,
      maxQueueSize: 500,
      timeoutMs: 2000,
    };
    expect(parse({ traces: file }).traces).toEqual(file);
    const env = parse(
      { traces: file },
      {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/v1/traces",
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: "authorization=Bearer%20abc,x-tenant=t1",
        OTEL_SERVICE_NAME: "from-env",
        OTEL_TRACES_SAMPLER_ARG: "0.5",
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "7",
        OTEL_BSP_SCHEDULE_DELAY: "50",
        OTEL_BSP_MAX_QUEUE_SIZE: "70",
        OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "300",
      },
    ).traces;
    expect(env).toEqual({
      enabled: true,
      endpoint: "http://127.0.0.1:4318/v1/traces",
      headers: { authorization: "Bearer abc", "x-tenant": "t1" },
      serviceName: "from-env",
      sampleRatio: 0.5,
      batchSize: 7,
      batchDelayMs: 50,
      maxQueueSize: 70,
      timeoutMs: 300,
    });
  });

  test("the shared OTEL_EXPORTER_OTLP_* variables fill in only what the file leaves out", () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
      OTEL_EXPORTER_OTLP_HEADERS: "x-shared=1",
      OTEL_EXPORTER_OTLP_TIMEOUT: "1234",
    };
    expect(parse({ traces: { enabled: true } }, env).traces).toMatchObject({
      endpoint: "http://collector:4318/v1/traces",
      headers: { "x-shared": "1" },
      timeoutMs: 1234,
    });
    expect(
      parse({ traces: { enabled: true, endpoint: "http://mine:4318/v1/traces", timeoutMs: 999 } }, env)
        .traces,
    ).toMatchObject({ endpoint: "http://mine:4318/v1/traces", timeoutMs: 999 });
  });

  test("a secret header is read from the environment, never written into the file", () => {
    const traces = parse(
      { traces: { enabled: true, headers: { Authorization: "Bearer ${OTLP_TOKEN}" } } },
      { OTLP_TOKEN: "s3cret" },
    ).traces;
    expect(traces.headers).toEqual({ Authorization: "Bearer s3cret" });
    expect(problemsOf(() => parse({ traces: { headers: { authorization: "Bearer s3cret" } } }))).toEqual([
      'mcpproxy.traces.headers.authorization: holds a secret written into the config file: put it in an environment variable and write "${VARIABLE}" here (or "Bearer ${VARIABLE}"), or set OTEL_EXPORTER_OTLP_TRACES_HEADERS',
    ]);
    expect(problemsOf(() => parse({ traces: { headers: { "x-api-key": "abc" } } }))[0]).toStartWith(
      "mcpproxy.traces.headers.x-api-key: holds a secret",
    );
  });

  test("bad values are problems that name the key or the variable", () => {
    expect(
      problemsOf(() =>
        parse({
          traces: {
            endpont: "x",
            endpoint: "ftp://collector/v1/traces",
            sampleRatio: 2,
            headers: { "bad header": "x", ok: "line\nbreak" },
          },
        }),
      ),
    ).toEqual([
      "mcpproxy.traces.endpont: unknown key (did you mean `endpoint`?)",
      "mcpproxy.traces.endpoint: must be an http:// or https:// URL (OTLP/HTTP)",
      'mcpproxy.traces.headers: holds a header that cannot be sent ("bad header")',
      "mcpproxy.traces.sampleRatio: must be a number from 0 to 1",
    ]);
    for (const value of ["line\nbreak", "emoji \u{1f600}"]) {
      expect(problemsOf(() => parse({ traces: { headers: { "x-ok": value } } }))).toEqual([
        'mcpproxy.traces.headers: holds a header that cannot be sent ("x-ok")',
      ]);
    }
    expect(problemsOf(() => parse({ traces: { batchSize: 600, maxQueueSize: 100 } }))).toEqual([
      "mcpproxy.traces.batchSize: is 600, more than maxQueueSize (100): a batch is taken from the queue",
    ]);
    expect(problemsOf(() => parse({}, { OTEL_EXPORTER_OTLP_TRACES_HEADERS: "novalue" }))).toEqual([
      'OTEL_EXPORTER_OTLP_TRACES_HEADERS: must be "name=value" pairs separated by commas, values %-encoded',
    ]);
    expect(problemsOf(() => parse({}, { OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" }))).toEqual([
      "OTEL_EXPORTER_OTLP_ENDPOINT: must be an absolute http(s) URL",
    ]);
    expect(problemsOf(() => parse({ traces: "on" }))).toEqual([
      "mcpproxy.traces: must be an object of settings",
    ]);
  });
});
