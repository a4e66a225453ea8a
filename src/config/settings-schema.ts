import * as v from "valibot";
import { LOG_LEVELS } from "../log.ts";
import { splitCommandLine } from "./command-line.ts";
import {
  MAX_CONCURRENT_BOUND,
  QUEUE_SIZE_BOUND,
  QUEUE_TIMEOUT_BOUND,
  RateLimitSchema,
} from "./limit-settings.ts";
import { StoreSchema } from "./store-setting.ts";
import {
  booleanLike,
  caseInsensitive,
  fraction,
  httpUrl,
  intInRange,
  jsonObject,
  nonEmptyString,
} from "./value-schemas.ts";

/**
 * The schema of the config file's top level and of the proxy's own `mcpproxy` section: each
 * proxy-wide setting with its file key, environment variable and schema (SETTINGS), and the file-only
 * keys `plugins` and `autoRetryFallback`. The section is strict, because a typo there is a real
 * mistake (unlike a server entry's, server-schema.ts); load-config.ts reads it with these.
 */

/** Proxy-wide settings: each has a file key (in `mcpproxy`), an environment variable and maybe a flag. */
export const SETTINGS = {
  topK: { env: "MCPPROXY_TOP_K", schema: intInRange(1, 50) },
  toolNameLimit: { env: "MCPPROXY_TOOL_NAME_LIMIT", schema: intInRange(10, 200) },
  transport: {
    env: "MCPPROXY_TRANSPORT",
    schema: v.pipe(
      caseInsensitive(
        ["stdio", "http", "streamable-http", "sse"],
        'must be "stdio", "streamable-http" (or "http") or "sse"',
      ),
      v.transform((input) => (input === "streamable-http" ? "http" : input)),
    ),
  },
  host: { env: "MCPPROXY_HOST", schema: nonEmptyString },
  port: { env: "MCPPROXY_PORT", schema: intInRange(0, 65535) },
  dataDir: { env: "MCPPROXY_DATA_DIR", schema: nonEmptyString },
  /** Where replicas share their state: empty for the data dir alone, or a postgres:// URL (src/store/). */
  store: { env: "MCPPROXY_STORE", schema: StoreSchema },
  logLevel: {
    env: "MCPPROXY_LOG_LEVEL",
    schema: caseInsensitive(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(", ")}`),
  },
  logFile: { env: "MCPPROXY_LOG_FILE", schema: nonEmptyString },
  resetData: { env: "MCPPROXY_RESET_DATA", schema: booleanLike },
  embedder: {
    env: "MCPPROXY_EMBEDDER",
    schema: caseInsensitive(["bm25", "use", "hf", "openai"], 'must be "BM25", "USE", "HF" or "OPENAI"'),
  },
  hfModel: { env: "MCPPROXY_HF_MODEL", schema: nonEmptyString },
  openaiBaseUrl: { env: "MCPPROXY_OPENAI_BASE_URL", schema: httpUrl },
  openaiModel: { env: "MCPPROXY_OPENAI_MODEL", schema: nonEmptyString },
  minScore: { env: "MCPPROXY_MIN_SCORE", schema: fraction },
  /** Cut each retrieve_tools list where its scores fall off from the best (src/index/adaptive-top-k.ts). */
  adaptiveTopK: { env: "MCPPROXY_ADAPTIVE_TOP_K", schema: booleanLike },
  /** The largest single message accepted from an upstream server (a tool result), in bytes. */
  maxResultBytes: { env: "MCPPROXY_MAX_RESULT_BYTES", schema: intInRange(1024, 1024 ** 3) },
  /** The most tools one server may list (all pages together); a server listing more fails alone. */
  maxTools: { env: "MCPPROXY_MAX_TOOLS", schema: intInRange(1, 1_000_000) },
  /** The most bytes one server's whole tool list may take (all pages together). */
  maxToolListBytes: { env: "MCPPROXY_MAX_TOOL_LIST_BYTES", schema: intInRange(1024, 1024 ** 3) },
  /** The largest single message accepted from a client (stdio line, HTTP body), in bytes. */
  maxRequestBytes: { env: "MCPPROXY_MAX_REQUEST_BYTES", schema: intInRange(1024, 1024 ** 3) },
  /** How many HTTP sessions may be open at once. */
  maxSessions: { env: "MCPPROXY_MAX_SESSIONS", schema: intInRange(1, 1_000_000) },
  /** How long one tool call may go without an answer or progress, in ms (a server's callTimeoutMs wins). */
  callTimeoutMs: { env: "MCPPROXY_CALL_TIMEOUT_MS", schema: intInRange(100, 24 * 3_600_000) },
  /** The most one tool call may take, progress or not, in ms. */
  maxCallMs: { env: "MCPPROXY_MAX_CALL_MS", schema: intInRange(100, 7 * 24 * 3_600_000) },
  /** How often a connected HTTP upstream is pinged to notice that it went away, in ms (0: never). */
  healthCheckMs: { env: "MCPPROXY_HEALTH_CHECK_MS", schema: intInRange(0, 3_600_000) },
  /** HTTP clients must send the bearer token from <dataDir>/http-token (always so off loopback). */
  requireToken: { env: "MCPPROXY_REQUIRE_TOKEN", schema: booleanLike },
  /** A stdio `serve` with no background service running starts one (`mcpproxy start`) and attaches to it. */
  autoStart: { env: "MCPPROXY_AUTO_START", schema: booleanLike },
  /** The background service shows its tray icon (`mcpproxy tray`) on a desktop. */
  tray: { env: "MCPPROXY_TRAY", schema: booleanLike },
  /** Quarantine every tool of a server seen for the first time, instead of trusting it on first use. */
  quarantineNewServers: { env: "MCPPROXY_QUARANTINE_NEW_SERVERS", schema: booleanLike },
  /** Count every call in <dataDir>/stats.db (tools_stat, mcpproxy stats, fallback suggestions). */
  stats: { env: "MCPPROXY_STATS", schema: booleanLike },
  /** Blend a small prior from recorded call outcomes into search scores (src/stats/usage-prior.ts). */
  learnedPrior: { env: "MCPPROXY_LEARNED_PRIOR", schema: booleanLike },
  /** Serve /metrics (Prometheus text format) on the HTTP transport. */
  metrics: { env: "MCPPROXY_METRICS", schema: booleanLike },
  /** How many tools get series of their own in /metrics; calls to the rest count under tool="(other)". */
  metricsToolLimit: { env: "MCPPROXY_METRICS_TOOL_LIMIT", schema: intInRange(0, 100_000) },
  /** Servers start on the first call that needs them unless their own `lazy` or `preconnect` says otherwise. */
  lazy: { env: "MCPPROXY_LAZY", schema: booleanLike },
  /** Agents may list servers with `upstream_servers` but not change them. */
  readOnly: { env: "MCPPROXY_READ_ONLY", schema: booleanLike },
  /** What the tool-poisoning scan's findings do: logged and shown (`warn`), or the tool quarantined (`block`). */
  poisoning: {
    env: "MCPPROXY_POISONING",
    schema: caseInsensitive(["warn", "block"], 'must be "warn" or "block"'),
  },
  /** How long an HTTP request body may take to arrive, in ms. */
  bodyTimeoutMs: { env: "MCPPROXY_BODY_TIMEOUT_MS", schema: intInRange(100, 3_600_000) },
  /** How long an HTTP session may go without a request before it is closed, in ms. */
  sessionIdleMs: { env: "MCPPROXY_SESSION_IDLE_MS", schema: intInRange(1_000, 7 * 24 * 3_600_000) },
  /**
   * How long a call waits for a 2026-07-28 client to come back with the input its server asked for
   * (input_required), in ms: then the server's request is refused and the call cancelled. Also the
   * life of the requestState the proxy hands out.
   */
  inputWaitMs: { env: "MCPPROXY_INPUT_WAIT_MS", schema: intInRange(1_000, 24 * 3_600_000) },
  /** How often a quiet 2026-07-28 listen stream over HTTP gets a keep-alive comment, in ms. */
  listenKeepAliveMs: { env: "MCPPROXY_LISTEN_KEEP_ALIVE_MS", schema: intInRange(1_000, 3_600_000) },
  /** Every server's default rate limit (a token bucket; limit-settings.ts), or false for none. */
  rateLimit: { env: "MCPPROXY_RATE_LIMIT", schema: RateLimitSchema },
  /** Every server's default bound on calls in flight at once (0: none). */
  maxConcurrent: { env: "MCPPROXY_MAX_CONCURRENT", schema: intInRange(0, MAX_CONCURRENT_BOUND) },
  /** How many calls may wait for a server's turn (0: an over-limit call is refused at once). */
  queueSize: { env: "MCPPROXY_QUEUE_SIZE", schema: intInRange(0, QUEUE_SIZE_BOUND) },
  /** The longest a call waits for its turn, in ms. */
  queueTimeoutMs: { env: "MCPPROXY_QUEUE_TIMEOUT_MS", schema: intInRange(0, QUEUE_TIMEOUT_BOUND) },
  routing: {
    env: "MCPPROXY_ROUTING_TYPE",
    schema: v.pipe(
      v.string('must be "call-tool", "dynamic", "auto" or "all"'),
      v.transform((input) => input.trim().toLowerCase().replace(/_/g, "-")),
      v.picklist(["call-tool", "dynamic", "auto", "all"], 'must be "call-tool", "dynamic", "auto" or "all"'),
    ),
  },
  /** `all` routing: how many of the most used tools carry `anthropic/alwaysLoad` (0: none). */
  alwaysLoad: { env: "MCPPROXY_ALWAYS_LOAD", schema: intInRange(0, 1_000) },
  toolsLimit: { env: "MCPPROXY_TOOLS_LIMIT", schema: intInRange(1, 100) },
  /** 0 turns truncation off. */
  truncateOutputLen: { env: "MCPPROXY_TRUNCATE_OUTPUT_LEN", schema: intInRange(0, 1_000_000_000) },
  /** A tool result over this many bytes (its JSON) is kept as a resource, its head shown (result-spill.ts); 0: off. */
  resultSpillBytes: { env: "MCPPROXY_RESULT_SPILL_BYTES", schema: intInRange(0, 1024 ** 3) },
  /** How many characters of a kept text the agent sees. */
  resultHeadChars: { env: "MCPPROXY_RESULT_HEAD_CHARS", schema: intInRange(0, 1_000_000) },
  /** The most one page of a kept result holds (characters of text, bytes of a blob). */
  resultPageChars: { env: "MCPPROXY_RESULT_PAGE_CHARS", schema: intInRange(1, 16 * 1024 ** 2) },
  /** How long a kept result may be read, in ms. */
  resultTtlMs: { env: "MCPPROXY_RESULT_TTL_MS", schema: intInRange(1_000, 7 * 24 * 3_600_000) },
  /** How many results one session (or 2026 principal) keeps; the oldest goes first. */
  resultsPerSession: { env: "MCPPROXY_RESULTS_PER_SESSION", schema: intInRange(1, 10_000) },
  /** How many bytes of results one session (or 2026 principal) keeps. */
  resultSessionBytes: { env: "MCPPROXY_RESULT_SESSION_BYTES", schema: intInRange(1024, 16 * 1024 ** 3) },
  /** How many bytes of results the whole proxy keeps, in memory. */
  resultStoreBytes: { env: "MCPPROXY_RESULT_STORE_BYTES", schema: intInRange(1024, 64 * 1024 ** 3) },
  listChangedExec: {
    env: "MCPPROXY_LIST_CHANGED_EXEC",
    schema: v.pipe(
      v.union(
        [v.string(), v.array(v.string())],
        "must be a command line (a string) or an argv (an array of strings)",
      ),
      v.rawTransform(({ dataset, addIssue, NEVER }) => {
        if (Array.isArray(dataset.value)) return dataset.value;
        try {
          return splitCommandLine(dataset.value);
        } catch (error) {
          addIssue({ message: `is not a command line: ${(error as Error).message}` });
          return NEVER;
        }
      }),
    ),
  },
  strictPlugins: { env: "MCPPROXY_STRICT_PLUGINS", schema: booleanLike },
  pluginTimeoutMs: { env: "MCPPROXY_PLUGIN_TIMEOUT_MS", schema: intInRange(10, 600_000) },
  vectorWeight: { env: "MCPPROXY_VECTOR_WEIGHT", schema: fraction },
} as const;

export type SettingName = keyof typeof SETTINGS;
export type Settings = { [K in SettingName]: v.InferOutput<(typeof SETTINGS)[K]["schema"]> };

/** The file's top level; each server entry and each `mcpproxy` key is then checked on its own. */
export const ConfigFileSchema = jsonObject(
  v.object({
    mcpServers: v.optional(jsonObject(v.record(v.string(), v.unknown()), "must be an object of servers"), {}),
    /** VS Code's `servers` map (entries with `type`), read like mcpServers. */
    servers: v.optional(jsonObject(v.record(v.string(), v.unknown()), "must be an object of servers"), {}),
    mcpproxy: v.optional(jsonObject(v.record(v.string(), v.unknown()), "must be an object of settings"), {}),
  }),
  "must be a JSON object",
);

/** `mcpproxy.autoRetryFallback` (file only: a person's setting, see fallback-retry.ts). */
export const AutoRetryFallbackSchema = v.boolean("must be true or false");

/** `mcpproxy.plugins`: file paths (relative to the config file), each alone or with its options. */
export const PluginsSchema = v.array(
  v.union(
    [
      v.pipe(v.string(), v.nonEmpty("must not be empty")),
      jsonObject(
        v.strictObject({
          path: v.pipe(v.string("must be a string"), v.nonEmpty("must not be empty")),
          options: v.optional(v.unknown()),
          /** Run without it when it cannot be loaded (a warning), instead of refusing to start. */
          optional: v.optional(v.boolean("must be true or false")),
        }),
        'must be a path, or {"path": …, "options": {…}, "optional": true}',
      ),
    ],
    'each plugin must be a path, or {"path": …, "options": {…}, "optional": true}',
  ),
  "must be an array of plugins",
);
