import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { GateStatus, LimitKind } from "../../limits/call-gate.ts";
import type { CallOutcome } from "../../stats/call-record.ts";

/**
 * `/metrics` in the Prometheus text format (`mcpproxy.metrics: true`), with prom-client rather
 * than hand-written exposition: calls and errors per server and tool, a latency histogram per
 * server and tool, the indexed tools and the servers by state. Same host guard and token as /mcp.
 *
 * Series per tool are bounded: one tool called costs about 20 series (a counter, up to three error
 * kinds, a histogram of 16 buckets), and 20,000 tools called once made 400,003 series, a 31 MiB
 * scrape and +464 MiB of memory. The first `toolLimit` tools called get series of their own and
 * keep them; calls to any other tool count under `tool="(other)"` of its server, as OpenTelemetry's
 * cardinality limit does with its overflow series. A tool never moves from one series to another,
 * so every counter only grows (rate() stays right), and `sum by (server)` is each server's exact total.
 */
export interface ProxyMetrics {
  observeCall(server: string, tool: string, ms: number, outcome: CallOutcome): void;
  contentType: string;
  text(): Promise<string>;
}

export interface MetricSources {
  indexedTools(): number;
  serverStates(): readonly { name: string; state: string; limits?: GateStatus | undefined }[];
  openSessions?: () => number;
  /** How many tools get series of their own (`mcpproxy.metricsToolLimit`); 0: per server only. */
  toolLimit: number;
}

/** The tool label of the calls to tools beyond the limit (one series set per server). */
const OTHER_TOOLS = "(other)";

/** Seconds: tool calls run from a millisecond to many minutes. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export function createMetrics(sources: MetricSources): ProxyMetrics {
  const registry = new Registry();
  const calls = new Counter({
    name: "mcpproxy_tool_calls_total",
    help: 'Tool calls forwarded to upstream servers (tools beyond metricsToolLimit count as tool="(other)")',
    labelNames: ["server", "tool"] as const,
    registers: [registry],
  });
  const errors = new Counter({
    name: "mcpproxy_tool_call_errors_total",
    help: "Tool calls that failed: an isError result, a JSON-RPC error or an unreachable server (error), or a timeout",
    labelNames: ["server", "tool", "kind"] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: "mcpproxy_tool_call_duration_seconds",
    help: "How long forwarded tool calls took",
    labelNames: ["server", "tool"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  new Gauge({
    name: "mcpproxy_indexed_tools",
    help: "Tools in the search index",
    registers: [registry],
    collect() {
      this.set(sources.indexedTools());
    },
  });
  new Gauge({
    name: "mcpproxy_servers",
    help: "Configured upstream servers by state (connected, failed, needs-login, ...)",
    labelNames: ["state"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { state } of sources.serverStates()) this.inc({ state });
    },
  });
  new Gauge({
    name: "mcpproxy_connected_servers",
    help: "Upstream servers connected now",
    registers: [registry],
    collect() {
      this.set(sources.serverStates().filter((server) => server.state === "connected").length);
    },
  });
  // The call limits of the servers that have them (src/limits/), read when scraped.
  const limited = () =>
    sources.serverStates().flatMap((server) => (server.limits ? [{ ...server, limits: server.limits }] : []));
  new Gauge({
    name: "mcpproxy_upstream_calls_in_flight",
    help: "Calls in flight to servers with call limits (rateLimit, maxConcurrent)",
    labelNames: ["server"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { name, limits } of limited()) this.set({ server: name }, limits.inFlight);
    },
  });
  new Gauge({
    name: "mcpproxy_upstream_calls_queued",
    help: "Calls waiting for their turn under a server's call limits",
    labelNames: ["server"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { name, limits } of limited()) this.set({ server: name }, limits.queued);
    },
  });
  new Counter({
    name: "mcpproxy_upstream_calls_rejected_total",
    help: "Calls a server's call limits refused, by limit (rate, concurrency, queue)",
    labelNames: ["server", "limit"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { name, limits } of limited()) {
        for (const [limit, count] of Object.entries(limits.rejected) as [LimitKind, number][])
          this.inc({ server: name, limit }, count);
      }
    },
  });
  if (sources.openSessions) {
    const open = sources.openSessions;
    new Gauge({
      name: "mcpproxy_open_sessions",
      help: "Client sessions open over HTTP",
      registers: [registry],
      collect() {
        this.set(open());
      },
    });
  }
  const { toolLimit } = sources;
  /** The tools that have series of their own, by server and tool. */
  const ownSeries = new Set<string>();
  const labelOf = (server: string, tool: string) => {
    const key = `${server}\u0000${tool}`;
    if (ownSeries.has(key)) return tool;
    if (ownSeries.size >= toolLimit) return OTHER_TOOLS;
    ownSeries.add(key);
    return tool;
  };
  return {
    observeCall(server, calledTool, ms, outcome) {
      // Refused by the call limits: it never reached the server (mcpproxy_upstream_calls_rejected_total).
      if (outcome === "limited") return;
      const tool = labelOf(server, calledTool);
      calls.inc({ server, tool });
      latency.observe({ server, tool }, ms / 1000);
      if (outcome !== "ok") errors.inc({ server, tool, kind: outcome });
    },
    contentType: registry.contentType,
    text: () => registry.metrics(),
  };
}
