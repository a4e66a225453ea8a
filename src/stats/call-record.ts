import type { RerankFigures, RerankRecord } from "./rerank-stats.ts";

/**
 * What every call through the proxy did, per tool: calls, successes, failures by kind (an
 * `isError` result, a JSON-RPC error, a timeout), latency (mean and a fine log-scale histogram for
 * the p95, latency-histogram.ts), the last error and when, how many calls followed a search that
 * showed the tool, the calls the server's limits refused (src/limits/: they never reached the
 * server, so they count apart from `calls` and the success rate), and what the chat model of `llm`
 * search mode cost (rerank-stats.ts). The records and figures here; counted by call-stats.ts on
 * one machine and shared-call-stats.ts in a team.
 */
export type CallOutcome = "ok" | "isError" | "error" | "timeout" | "limited";

export interface CallRecord {
  server: string;
  tool: string;
  ms: number;
  outcome: CallOutcome;
  error?: string | undefined;
  /** The tool was in the calling session's last retrieve_tools answer. */
  afterSearch: boolean;
  /** The client session that made the call: its own errors are told back to it (tools_stat). */
  session?: string | undefined;
  /** Who called (the HTTP listener's access token, src/auth/resource/): counted for them apart too. */
  principal?: string | undefined;
}

export interface ToolStats {
  server: string;
  tool: string;
  calls: number;
  successes: number;
  /** `isError` results. */
  isErrors: number;
  /** JSON-RPC errors and unreachable servers. */
  errors: number;
  timeouts: number;
  /** Refused by the server's call limits (rate, concurrency, a full queue): not in `calls`. */
  limited: number;
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
  afterSearch: number;
  lastError?: string | undefined;
  lastErrorAt?: string | undefined;
  lastCalledAt: string;
}

export interface CallStats {
  record(call: CallRecord): void;
  /** One search's use of the chat model in `llm` search mode (rerank-stats.ts). */
  recordRerank(record: RerankRecord): void;
  /** The chat model's figures per model, what is still in memory included. */
  reranks(): RerankFigures[];
  /** Every tool's figures, what is still in memory included. */
  all(): ToolStats[];
  /** These tools' figures (those with any), read row by row: a search's few hits, not every tool. */
  figuresOf(tools: readonly { server: string; tool: string }[]): ToolStats[];
  /**
   * The last error of each tool as one session's own calls met it (this process's, in memory).
   * Another session's errors may quote its data: an agent sees its own only.
   */
  errorsOf(session: string): Map<string, { error: string; at: string }>;
  /** Every tool's figures of one principal's own calls. */
  ofPrincipal(principal: string): ToolStats[];
  /** Forgets a server's figures, or one tool's; resolves to how many tools were reset. */
  reset(filter: { server?: string | undefined; tool?: string | undefined }): number;
  flush(): void;
  /**
   * Starts saving to the data dir (a serve that took the writer lock over from one that exited):
   * what it counted in memory meanwhile is saved with the next flush.
   */
  startSaving(): void;
  close(): void;
}
