import * as v from "valibot";
import { LOG_LEVELS } from "../log.ts";
import { StoreSchema } from "../store/store-setting.ts";
import { splitCommandLine } from "./command-line.ts";
import {
  MAX_CONCURRENT_BOUND,
  QUEUE_SIZE_BOUND,
  QUEUE_TIMEOUT_BOUND,
  RateLimitSchema,
  serverLimitKeys,
} from "./limit-settings.ts";
import { PROFILE_NAME } from "./profile-settings.ts";

/**
 * The config file schema. Server entries follow the `mcpServers` map of Claude Desktop, Cursor and
 * VS Code so users can paste their existing config; unknown keys in a server entry are ignored for
 * that reason. The proxy's own `mcpproxy` section is strict, because a typo there is a real mistake.
 */

// valibot's object and record schemas accept arrays, which a JSON config must not be.
const isPlainObject = (input: unknown) =>
  input !== null && typeof input === "object" && !Array.isArray(input);
const jsonObject = <T extends v.GenericSchema>(schema: T, message: string) =>
  v.pipe(v.custom<v.InferInput<T>>(isPlainObject, message), schema);

const stringMap = jsonObject(
  v.record(v.string(), v.string("must be a string")),
  "must be an object of strings",
);
const timeoutMs = v.pipe(
  v.number("must be a number of milliseconds"),
  v.integer("must be a whole number of milliseconds"),
  v.minValue(100, "must be at least 100"),
  v.maxValue(3_600_000, "must be at most 3600000 (one hour)"),
);

/** One tool's override; its unknown keys are reported by parse-server.ts with a suggestion. */
const ToolOverrideSchema = jsonObject(
  v.object({
    enabled: v.optional(v.boolean("must be true or false")),
    name: v.optional(
      v.pipe(
        v.string("must be a string"),
        v.regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, `_` or `-`"),
      ),
    ),
    description: v.optional(v.pipe(v.string("must be a string"), v.nonEmpty("must not be empty"))),
    annotations: v.optional(
      jsonObject(
        v.object({
          title: v.optional(v.string("must be a string")),
          readOnlyHint: v.optional(v.boolean("must be true or false")),
          destructiveHint: v.optional(v.boolean("must be true or false")),
          idempotentHint: v.optional(v.boolean("must be true or false")),
          openWorldHint: v.optional(v.boolean("must be true or false")),
        }),
        "must be an object of tool annotations",
      ),
    ),
  }),
  'must be an object such as {"enabled": false} or {"description": "…"}',
);
export const TOOL_OVERRIDE_KEYS = ["enabled", "name", "description", "annotations"] as const;
export const TOOL_ANNOTATION_KEYS = [
  "title",
  "readOnlyHint",
  "destructiveHint",
  "idempotentHint",
  "openWorldHint",
] as const;

const commonServerKeys = {
  enabled: v.optional(v.boolean("must be true or false")),
  /** Cline and Roo write `disabled: true`; accepted so their configs paste unchanged. */
  disabled: v.optional(v.boolean("must be true or false")),
  /** How long connecting (initialize + first tools/list) may take. */
  timeoutMs: v.optional(timeoutMs),
  /** How long one call may go without an answer or a progress notification. */
  callTimeoutMs: v.optional(timeoutMs),
  /** What a changed or new tool gets: quarantined until approved (`pin`), or accepted and logged (`auto`). */
  trust: v.optional(v.picklist(["pin", "auto"], 'must be "pin" or "auto"')),
  /** `false`: calls are not checked against the tools' input schemas (for servers with sloppy schemas). */
  validateArguments: v.optional(v.boolean("must be true or false")),
  /** Started on the first call that needs it, not with the proxy; its tools are searchable from the saved index. */
  lazy: v.optional(v.boolean("must be true or false")),
  /**
   * A failed read-only call of its tools is retried on a read-only alternative, and its tools may be
   * such alternatives (fallback-retry.ts). Default: `mcpproxy.autoRetryFallback`. A person's setting only.
   */
  autoRetryFallback: v.optional(v.boolean("must be true or false")),
  /** Hold every tool of this server for `mcpproxy approve` on first sight (servers an agent adds get it). */
  quarantined: v.optional(v.boolean("must be true or false")),
  /**
   * Sampling, elicitation and roots requests the server makes outside any call are relayed (to a
   * session that called it) instead of refused.
   */
  relayOutsideCalls: v.optional(v.boolean("must be true or false")),
  /** The most tools this server may list (all pages); more fails this server alone. Default: `mcpproxy.maxTools`. */
  maxTools: v.optional(
    v.pipe(
      v.number("must be a whole number from 1 to 1000000"),
      v.integer("must be a whole number from 1 to 1000000"),
      v.minValue(1, "must be a whole number from 1 to 1000000"),
      v.maxValue(1_000_000, "must be a whole number from 1 to 1000000"),
    ),
  ),
  /** The most bytes its whole tool list may take (all pages). Default: `mcpproxy.maxToolListBytes`. */
  maxToolListBytes: v.optional(
    v.pipe(
      v.number("must be a whole number of bytes from 1024 to 1073741824"),
      v.integer("must be a whole number of bytes from 1024 to 1073741824"),
      v.minValue(1024, "must be a whole number of bytes from 1024 to 1073741824"),
      v.maxValue(1024 ** 3, "must be a whole number of bytes from 1024 to 1073741824"),
    ),
  ),
  /** Call limits (src/limits/): a person's settings, never an agent's. */
  ...serverLimitKeys,
  /** The upstream's tools this proxy hides (Cline's and Roo Code's key): a person's setting only. */
  disabledTools: v.optional(
    v.array(
      v.pipe(v.string("must be a tool name"), v.nonEmpty("must not be empty")),
      "must be an array of the server's tool names",
    ),
  ),
  /** A person's overrides of the server's tools, by the upstream's tool name (tool-overrides.ts). */
  tools: v.optional(jsonObject(v.record(v.string(), ToolOverrideSchema), "must be an object of tool names")),
  /** Labels a profile may select the server by (`mcpproxy.profiles`): a person's setting only. */
  tags: v.optional(
    v.array(
      v.pipe(
        v.string("must be a tag"),
        v.regex(
          PROFILE_NAME,
          "must be letters, digits, '.', '_' or '-' (at most 64), starting with a letter or digit",
        ),
      ),
      "must be an array of tags",
    ),
  ),
  /** Set by `mcpproxy approve`: the hash of the launch spec a person approved. */
  approved: v.optional(v.string("must be a string")),
  /** What the server gets for roots/list outside a call: directories (paths or file:// URIs). */
  roots: v.optional(
    v.array(
      v.pipe(v.string("must be a path or a file:// URI"), v.nonEmpty("must not be empty")),
      "must be an array of paths or file:// URIs",
    ),
  ),
};

/**
 * Which of the person's environment variables a stdio server gets beyond the baseline and the
 * network/CA/locale set (src/upstream/child-env.ts): `true` for all of them, or their names. Per
 * server, or `mcpproxy.inheritEnv` for every server the person wrote. A person's setting only:
 * an agent cannot write it, and it is part of the launch spec a person approves.
 */
export const InheritEnvSchema = v.union(
  [
    v.boolean(),
    v.array(
      v.pipe(
        v.string("must be a variable name"),
        v.regex(/^[^=\0]+$/, "must be a variable name (no `=`, not empty)"),
      ),
    ),
  ],
  'must be true, false or a list of variable names (["HTTPS_PROXY", …])',
);

export const StdioServerSchema = v.object({
  ...commonServerKeys,
  command: v.pipe(v.string("must be a string"), v.nonEmpty("must not be empty")),
  args: v.optional(v.array(v.string("must be a string"), "must be an array of strings")),
  env: v.optional(stringMap),
  inheritEnv: v.optional(InheritEnvSchema),
  cwd: v.optional(v.string("must be a string")),
  type: v.optional(v.literal("stdio", 'must be "stdio" for a server with a command')),
  transport: v.optional(v.literal("stdio", 'must be "stdio" for a server with a command')),
});

const httpTransport = v.picklist(
  ["http", "streamable-http", "streamableHttp", "sse"],
  'must be "streamable-http" (or "http") or "sse"',
);

export const HttpServerSchema = v.object({
  ...commonServerKeys,
  url: v.pipe(v.string("must be a string"), v.url("must be an absolute http(s) URL")),
  headers: v.optional(stringMap),
  type: v.optional(httpTransport),
  transport: v.optional(httpTransport),
  /**
   * OAuth (the MCP authorization spec): on by default for a server without an Authorization header;
   * `false` turns it off; an object gives a client registered by hand, or the URL of a client
   * metadata document to use as the client id (SEP-991; a person's setting, never an agent's), and
   * the scopes to ask for.
   */
  oauth: v.optional(
    v.union(
      [
        v.literal(false),
        v.pipe(
          v.strictObject({
            clientId: v.optional(v.pipe(v.string("must be a string"), v.nonEmpty("must not be empty"))),
            clientSecret: v.optional(v.string("must be a string")),
            clientMetadataUrl: v.optional(
              v.pipe(
                v.string("must be a string"),
                v.check(
                  isClientMetadataUrl,
                  "must be an https:// URL with a path (the client metadata document)",
                ),
              ),
            ),
            scopes: v.optional(v.array(v.string("must be a string"), "must be an array of strings")),
          }),
          v.check(
            (oauth) => !(oauth.clientId && oauth.clientMetadataUrl),
            "give clientId (a client registered by hand) or clientMetadataUrl, not both",
          ),
        ),
      ],
      'must be false or {"clientId", "clientSecret", "clientMetadataUrl", "scopes"}',
    ),
  ),
});

/** A client metadata document URL as a client id must be (SEP-991): https, with a path. */
function isClientMetadataUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" && url.pathname !== "/";
  } catch {
    return false;
  }
}

export const intInRange = (min: number, max: number) =>
  v.pipe(
    v.union([v.number(), v.string()], `must be a whole number from ${min} to ${max}`),
    v.transform((input) => (typeof input === "string" && input.trim() !== "" ? Number(input) : input)),
    v.number(`must be a whole number from ${min} to ${max}`),
    v.integer(`must be a whole number from ${min} to ${max}`),
    v.minValue(min, `must be a whole number from ${min} to ${max}`),
    v.maxValue(max, `must be a whole number from ${min} to ${max}`),
  );

export const caseInsensitive = <const T extends readonly string[]>(options: T, message: string) =>
  v.pipe(
    v.string(message),
    v.transform((input) => input.trim().toLowerCase()),
    v.picklist(options, message),
  );

export const booleanLike = v.pipe(
  v.union([v.boolean(), v.string()], "must be true or false"),
  v.transform((input) => (typeof input === "boolean" ? input : input.trim().toLowerCase())),
  v.union([v.boolean(), v.picklist(["1", "0", "true", "false", "yes", "no", ""])], "must be true or false"),
  v.transform((input) => input === true || input === "1" || input === "true" || input === "yes"),
);

export const nonEmptyString = v.pipe(v.string("must be a string"), v.nonEmpty("must not be empty"));
export const httpUrl = v.pipe(v.string("must be a string"), v.url("must be an absolute http(s) URL"));

export const fraction = v.pipe(
  v.union([v.number(), v.string()], "must be a number from 0 to 1"),
  v.transform((input) => (typeof input === "string" && input.trim() !== "" ? Number(input) : input)),
  v.number("must be a number from 0 to 1"),
  v.minValue(0, "must be a number from 0 to 1"),
  v.maxValue(1, "must be a number from 0 to 1"),
);

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
