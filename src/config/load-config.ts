import { existsSync } from "node:fs";
import { dirname } from "node:path";
import * as v from "valibot";
import { ProxyError } from "../errors.ts";
import { createDefaultConfig, parseConfigText, readConfigFile } from "./config-file.ts";
import { type ExpansionProblem, expandDeep } from "./expand-env.ts";
import { type ResolvedHttpAuth, resolveHttpAuth } from "./http-auth-config.ts";
import { IGNORED_TOP_LEVEL_KEYS, unknownKeys } from "./known-keys.ts";
import { PreconnectSchema, resolveLazyStarts } from "./lazy-start.ts";
import { DEFAULT_QUEUE_SIZE, DEFAULT_QUEUE_TIMEOUT_MS } from "./limit-settings.ts";
import { issueToProblem, parseServer, type ServerConfig } from "./parse-server.ts";
import { defaultDataDir, expandPath, locateConfig } from "./paths.ts";
import { type Profiles, parseProfiles } from "./profile-settings.ts";
import { type ResolvedSearch, type ResolveTable, resolveSearch } from "./search-config.ts";
import { InheritEnvSchema } from "./server-schema.ts";
import {
  AutoRetryFallbackSchema,
  ConfigFileSchema,
  PluginsSchema,
  SETTINGS,
  type SettingName,
  type Settings,
} from "./settings-schema.ts";
import { literalPasswordProblem } from "./store-setting.ts";
import { type ResolvedTraces, resolveTraces } from "./trace-config.ts";

export interface ResolvedConfig extends Readonly<Settings> {
  configPath: string;
  /** User plugins, in config order, with absolute paths. */
  plugins: readonly { path: string; options?: unknown; optional?: boolean }[];
  /** Every configured server, enabled or not, sorted by name; `lazy` resolved (lazy-start.ts). */
  servers: readonly ServerConfig[];
  /** `mcpproxy.search` (search-config.ts); `embedder` is the one its mode implies. */
  search: Readonly<ResolvedSearch>;
  /** `mcpproxy.preconnect`: started with `serve` even when lazy (each a configured server). */
  preconnect: readonly string[];
  /** `mcpproxy.autoRetryFallback`: the default of the servers a person wrote (fallback-retry.ts). */
  autoRetryFallback: boolean;
  /** `mcpproxy.traces` (trace-config.ts). */
  traces: Readonly<ResolvedTraces>;
  /** `mcpproxy.profiles` (profile-settings.ts), by name. */
  profiles: Profiles;
  /** `mcpproxy.httpAuth` (http-auth-config.ts): set, the HTTP listener takes JWT access tokens. */
  httpAuth?: Readonly<ResolvedHttpAuth> | undefined;
}

/** Flag values from the command line; the flag's spelling is used in error messages. */
export type SettingOverrides = Partial<Record<SettingName | "searchMode", { value: unknown; flag: string }>>;

export interface LoadConfigOptions {
  configFlag?: string | undefined;
  overrides?: SettingOverrides;
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
  /** The file's content to check instead of what is on disk: an edit is validated before it is written. */
  text?: string | undefined;
}

/** Generous for images and files in tool results, and still a bound on memory. */
export const DEFAULT_MAX_RESULT_BYTES = 20 * 1024 * 1024;
/** Bounds on one server's whole tool list: above the largest real servers, still a bound on memory. */
export const DEFAULT_MAX_TOOLS = 10_000;
export const DEFAULT_MAX_TOOL_LIST_BYTES = 50 * 1024 * 1024;
/** Requests carry a query or a tool's arguments: a few MB is plenty, and bounds what a client can make us hold. */
const DEFAULT_MAX_REQUEST_BYTES = 4 * 1024 * 1024;

function defaults(env: Readonly<Record<string, string | undefined>>): Settings {
  return {
    topK: 5,
    toolNameLimit: 60,
    transport: "stdio",
    host: "127.0.0.1",
    port: 8000,
    dataDir: defaultDataDir(env),
    store: "",
    logLevel: "info",
    logFile: "",
    resetData: false,
    embedder: "bm25",
    hfModel: "sentence-transformers/all-MiniLM-L6-v2",
    openaiBaseUrl: "https://api.openai.com/v1",
    openaiModel: "text-embedding-3-small",
    minScore: 0.05,
    adaptiveTopK: false,
    maxResultBytes: DEFAULT_MAX_RESULT_BYTES,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    maxTools: DEFAULT_MAX_TOOLS,
    maxToolListBytes: DEFAULT_MAX_TOOL_LIST_BYTES,
    healthCheckMs: 30_000,
    maxSessions: 1_000,
    bodyTimeoutMs: 30_000,
    requireToken: false,
    autoStart: false,
    tray: false,
    quarantineNewServers: false,
    readOnly: false,
    lazy: false,
    stats: true,
    metrics: false,
    metricsToolLimit: 100,
    learnedPrior: false,
    poisoning: "warn",
    callTimeoutMs: 120_000,
    maxCallMs: 20 * 60_000,
    sessionIdleMs: 15 * 60_000,
    listenKeepAliveMs: 15_000,
    inputWaitMs: 5 * 60_000,
    routing: "call-tool",
    toolsLimit: 15,
    alwaysLoad: 10,
    truncateOutputLen: 0,
    resultSpillBytes: 64 * 1024,
    resultHeadChars: 4096,
    resultPageChars: 32 * 1024,
    resultTtlMs: 30 * 60_000,
    resultsPerSession: 20,
    resultSessionBytes: 64 * 1024 ** 2,
    resultStoreBytes: 256 * 1024 ** 2,
    listChangedExec: [],
    strictPlugins: false,
    pluginTimeoutMs: 2_000,
    vectorWeight: 0.4,
    rateLimit: false,
    maxConcurrent: 0,
    queueSize: DEFAULT_QUEUE_SIZE,
    queueTimeoutMs: DEFAULT_QUEUE_TIMEOUT_MS,
  };
}

/** Settings that exist in the file only (no environment variable or flag). */
const FILE_ONLY_SETTINGS = ["plugins", "inheritEnv", "preconnect", "autoRetryFallback", "profiles"] as const;
/** Sections of settings with their own tables (search-config.ts, trace-config.ts). */
const SECTIONS = ["search", "traces", "httpAuth"] as const;
const TOP_LEVEL_KEYS = ["mcpServers", "servers", "mcpproxy"] as const;

/**
 * Reads the config file (JSON or JSONC), expands `${VAR}`, applies environment and flag overrides
 * (flag > env > file > default), validates everything and returns a frozen config.
 * Every problem is collected and thrown together, blaming where each came from.
 */
export function loadConfig(options: LoadConfigOptions = {}): ResolvedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const location = locateConfig(options.configFlag, env, cwd);
  if (options.text !== undefined) {
    return parseConfig(parseConfigText(options.text, location.path), {
      ...options,
      env,
      cwd,
      configPath: location.path,
    });
  }
  if (location.mustCreate) {
    createDefaultConfig(location.path);
  } else if (!existsSync(location.path)) {
    throw new ProxyError(
      "CONFIG_NOT_FOUND",
      `Config file ${location.path} does not exist. Create it with {"mcpServers": {}} or pass --config FILE.`,
    );
  }
  return parseConfig(readConfigFile(location.path), { ...options, env, cwd, configPath: location.path });
}

export function parseConfig(
  raw: unknown,
  options: LoadConfigOptions & { configPath: string },
): ResolvedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const configDir = dirname(options.configPath);
  const problems: ExpansionProblem[] = [];
  const file = v.safeParse(ConfigFileSchema, raw);
  if (!file.success) {
    throw invalid(
      options.configPath,
      file.issues.map((issue) => issueToProblem(issue, "")),
    );
  }
  problems.push(...unknownKeys(raw as Record<string, unknown>, TOP_LEVEL_KEYS, "", IGNORED_TOP_LEVEL_KEYS));

  const overrides = options.overrides ?? {};
  const settings = resolveSettings(file.output.mcpproxy, env, overrides, problems);
  const proxySection = file.output.mcpproxy;
  const { search, embedder } = resolveSearch(
    {
      raw: proxySection.search,
      env,
      embedder: settings.embedder,
      isEmbedderNamed:
        proxySection.embedder !== undefined ||
        !!env[SETTINGS.embedder.env] ||
        overrides.embedder !== undefined,
      modeFlag: overrides.searchMode,
      resolve: (table, values, path, flags, into) =>
        resolveTable(table, values, path, env, flags, problems, into),
    },
    problems,
  );
  const storeProblem = literalPasswordProblem(proxySection.store);
  if (storeProblem) problems.push({ path: "mcpproxy.store", message: storeProblem });
  const traces = resolveTraces(
    {
      raw: proxySection.traces,
      env,
      resolve: (table, values, path, flags, into) =>
        resolveTable(table, values, path, env, flags, problems, into),
    },
    problems,
  );
  const inheritEnv = parseFileSetting(InheritEnvSchema, file.output.mcpproxy, "inheritEnv", env, problems);
  const autoRetryFallback =
    parseFileSetting(AutoRetryFallbackSchema, file.output.mcpproxy, "autoRetryFallback", env, problems) ??
    false;
  const preconnect =
    parseFileSetting(PreconnectSchema, file.output.mcpproxy, "preconnect", env, problems) ?? [];
  const parsed: ServerConfig[] = [];
  // A set, not a scan of what is parsed so far: with 20,000 servers the scan was most of the load.
  const names = new Set<string>();
  for (const section of ["mcpServers", "servers"] as const) {
    // The raw map, not valibot's copy: that one drops keys such as `__proto__` in silence, and a
    // name that cannot be used must be reported, not ignored.
    const entries = (raw as Record<string, unknown>)[section] ?? {};
    for (const [name, entry] of Object.entries(entries as Record<string, unknown>)) {
      if (names.has(name)) {
        problems.push({ path: `${section}.${name}`, message: "a server of this name is already configured" });
        continue;
      }
      const server = parseServer(name, entry, env, configDir, problems, section, {
        inheritEnv,
        limits: settings,
      });
      if (server) {
        parsed.push(server);
        names.add(name);
      }
    }
  }
  const servers = resolveLazyStarts(parsed, { lazy: settings.lazy, preconnect }, problems);
  servers.sort((a, b) => a.name.localeCompare(b.name));
  const plugins = parsePlugins(file.output.mcpproxy.plugins, configDir, env, problems);
  const profiles = parseProfiles(
    expandDeep(file.output.mcpproxy.profiles, env, "mcpproxy.profiles", problems),
    problems,
  );
  const httpAuth = resolveHttpAuth(
    {
      raw: proxySection.httpAuth,
      profiles,
      resolve: (table, values, path, flags, into) =>
        resolveTable(table, values, path, env, flags, problems, into),
    },
    problems,
  );
  if (problems.length > 0) throw invalid(options.configPath, problems);
  const dataDir = expandPath(settings.dataDir, env, cwd);
  const logFile = settings.logFile ? expandPath(settings.logFile, env, cwd) : "";
  return Object.freeze({
    ...settings,
    embedder: embedder as Settings["embedder"],
    search: Object.freeze(search),
    traces: Object.freeze(traces),
    dataDir,
    logFile,
    configPath: options.configPath,
    plugins: Object.freeze(plugins),
    // Not frozen (readonly by its type): JavaScriptCore freezes an array by moving it to a slow
    // storage, which cost 60 ms at 20,000 servers and made every later walk of it ten times slower.
    servers,
    preconnect: Object.freeze(preconnect),
    autoRetryFallback,
    profiles: Object.freeze(profiles),
    ...(httpAuth ? { httpAuth: Object.freeze(httpAuth) } : {}),
  });
}

function resolveSettings(
  section: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
  overrides: SettingOverrides,
  problems: ExpansionProblem[],
): Settings {
  const resolved: Record<string, unknown> = { ...defaults(env) };
  problems.push(
    ...unknownKeys(section, [...Object.keys(SETTINGS), ...FILE_ONLY_SETTINGS, ...SECTIONS], "mcpproxy"),
  );
  resolveTable(SETTINGS, section, "mcpproxy", env, overrides, problems, resolved);
  return resolved as Settings;
}

/**
 * One table of settings (file key, environment variable, schema) into `into`: flag > env > file >
 * what `into` holds. File values expand `${VAR}`; each bad layer is a problem blaming its source.
 */
function resolveTable(
  table: Parameters<ResolveTable>[0],
  section: Readonly<Record<string, unknown>>,
  path: string,
  env: Readonly<Record<string, string | undefined>>,
  flags: Parameters<ResolveTable>[3],
  problems: ExpansionProblem[],
  into: Record<string, unknown>,
): void {
  for (const [name, setting] of Object.entries(table)) {
    const layers: { path: string; value: unknown; source: "file" | "env" | "flag" }[] = [];
    if (section[name] !== undefined) {
      const at = `${path}.${name}`;
      layers.push({ path: at, value: expandDeep(section[name], env, at, problems), source: "file" });
    }
    const fromEnv = env[setting.env];
    if (fromEnv !== undefined && fromEnv !== "")
      layers.push({ path: setting.env, value: fromEnv, source: "env" });
    const fromFlag = flags[name];
    if (fromFlag !== undefined) layers.push({ path: fromFlag.flag, value: fromFlag.value, source: "flag" });
    for (const layer of layers) {
      const parsed = v.safeParse(setting.schema, layer.value);
      if (parsed.success) into[name] = parsed.output;
      else
        problems.push({
          path: layer.path,
          message: parsed.issues[0]?.message ?? "is invalid",
          source: layer.source,
        });
    }
  }
}

/**
 * A setting of the file only (no environment variable or flag: `inheritEnv`, the person's variables
 * every server they wrote gets; `autoRetryFallback`; `preconnect`), or undefined when not set or invalid.
 */
function parseFileSetting<T extends v.GenericSchema>(
  schema: T,
  section: Record<string, unknown>,
  key: (typeof FILE_ONLY_SETTINGS)[number],
  env: Readonly<Record<string, string | undefined>>,
  problems: ExpansionProblem[],
): v.InferOutput<T> | undefined {
  if (section[key] === undefined) return undefined;
  const parsed = v.safeParse(schema, expandDeep(section[key], env, `mcpproxy.${key}`, problems));
  if (parsed.success) return parsed.output;
  problems.push(...parsed.issues.map((issue) => issueToProblem(issue, `mcpproxy.${key}`)));
  return undefined;
}

function parsePlugins(
  raw: unknown,
  configDir: string,
  env: Readonly<Record<string, string | undefined>>,
  problems: ExpansionProblem[],
): { path: string; options?: unknown; optional?: boolean }[] {
  if (raw === undefined) return [];
  const parsed = v.safeParse(PluginsSchema, expandDeep(raw, env, "mcpproxy.plugins", problems));
  if (!parsed.success) {
    problems.push(...parsed.issues.map((issue) => issueToProblem(issue, "mcpproxy.plugins")));
    return [];
  }
  return parsed.output.map((entry) =>
    typeof entry === "string"
      ? { path: expandPath(entry, env, configDir) }
      : {
          path: expandPath(entry.path, env, configDir),
          ...(entry.options !== undefined ? { options: entry.options } : {}),
          ...(entry.optional ? { optional: true } : {}),
        },
  );
}

const SOURCE_NAMES = { flag: "the command line", env: "the environment", file: "the config file" } as const;

/** One error for every problem, whose message names where they are: the flags, the environment, the file. */
function invalid(configPath: string, problems: readonly ExpansionProblem[]): ProxyError {
  const sources = (["flag", "env", "file"] as const).filter((source) =>
    problems.some((problem) => (problem.source ?? "file") === source),
  );
  const places = sources.map((source) =>
    source === "file" ? `the config file ${configPath}` : SOURCE_NAMES[source],
  );
  const where = places.length > 1 ? `${places.slice(0, -1).join(", ")} and ${places.at(-1)}` : places[0];
  const count = problems.length;
  return new ProxyError(
    sources.length === 1 && sources[0] === "flag" ? "USAGE" : "CONFIG_INVALID",
    `${count} problem${count === 1 ? "" : "s"} in ${where}; fix ${count === 1 ? "it" : "them"} and run again.`,
    { details: problems.map((problem) => `${problem.path}: ${problem.message}`) },
  );
}
