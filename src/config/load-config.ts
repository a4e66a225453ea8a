import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import * as v from "valibot";
import { ProxyError } from "../errors.ts";
import { type ExpansionProblem, expandDeep } from "./expand-env.ts";
import { defaultDataDir, homeDir, locateConfig } from "./paths.ts";
import {
  ConfigFileSchema,
  HttpServerSchema,
  PluginsSchema,
  SETTINGS,
  type SettingName,
  type Settings,
  StdioServerSchema,
} from "./schema.ts";

interface ServerBase {
  name: string;
  enabled: boolean;
  timeoutMs: number;
}
export interface StdioServerConfig extends ServerBase {
  transport: "stdio";
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string | undefined;
}
export interface HttpServerConfig extends ServerBase {
  transport: "streamable-http" | "sse";
  url: string;
  headers: Readonly<Record<string, string>>;
}
export type ServerConfig = StdioServerConfig | HttpServerConfig;

export interface ResolvedConfig extends Readonly<Settings> {
  configPath: string;
  /** User plugins, in config order, with absolute paths. */
  plugins: readonly { path: string; options?: unknown }[];
  /** Every configured server, enabled or not, sorted by name. */
  servers: readonly ServerConfig[];
}

/** Flag values from the command line; the flag's spelling is used in error messages. */
export type SettingOverrides = Partial<Record<SettingName, { value: unknown; flag: string }>>;

export interface LoadConfigOptions {
  configFlag?: string | undefined;
  overrides?: SettingOverrides;
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
/** Generous for images and files in tool results, and still a bound on memory. */
export const DEFAULT_MAX_MESSAGE_BYTES = 20 * 1024 * 1024;
const EMPTY_CONFIG = `${JSON.stringify({ mcpServers: {} }, null, 2)}\n`;

function defaults(env: Readonly<Record<string, string | undefined>>): Settings {
  return {
    topK: 5,
    toolNameLimit: 60,
    transport: "stdio",
    host: "127.0.0.1",
    port: 8000,
    dataDir: defaultDataDir(env),
    logLevel: "info",
    logFile: "",
    resetData: false,
    embedder: "bm25",
    hfModel: "sentence-transformers/all-MiniLM-L6-v2",
    openaiBaseUrl: "https://api.openai.com/v1",
    openaiModel: "text-embedding-3-small",
    minScore: 0.05,
    maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
    routing: "call-tool",
    toolsLimit: 15,
    truncateOutputLen: 0,
    listChangedExec: [],
    strictPlugins: false,
    pluginTimeoutMs: 2_000,
    vectorWeight: 0.2,
  };
}

/**
 * Reads the config file, expands `${VAR}`, applies environment and flag overrides
 * (flag > env > file > default), validates everything and returns a frozen config.
 * Every problem is collected and thrown together as one CONFIG_INVALID error.
 */
export function loadConfig(options: LoadConfigOptions = {}): ResolvedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const location = locateConfig(options.configFlag, env, cwd);
  if (location.mustCreate) {
    mkdirSync(dirname(location.path), { recursive: true });
    writeFileSync(location.path, EMPTY_CONFIG, { flag: "wx" });
  } else if (!existsSync(location.path)) {
    throw new ProxyError(
      "CONFIG_NOT_FOUND",
      `Config file ${location.path} does not exist. Create it with {"mcpServers": {}} or pass --config FILE.`,
    );
  }
  const text = readFileSync(location.path, "utf8");
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ProxyError(
      "CONFIG_INVALID",
      `Config file ${location.path} is not valid JSON: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  return parseConfig(raw, { ...options, env, cwd, configPath: location.path });
}

export function parseConfig(
  raw: unknown,
  options: LoadConfigOptions & { configPath: string },
): ResolvedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const problems: ExpansionProblem[] = [];
  const file = v.safeParse(ConfigFileSchema, raw);
  if (!file.success) {
    throw invalid(
      options.configPath,
      file.issues.map((issue) => issueToProblem(issue, "")),
    );
  }

  const settings = resolveSettings(file.output.mcpproxy, env, options.overrides ?? {}, problems);
  const servers: ServerConfig[] = [];
  for (const [name, entry] of Object.entries(file.output.mcpServers)) {
    const server = parseServer(name, entry, env, dirname(options.configPath), problems);
    if (server) servers.push(server);
  }
  if (problems.length > 0) throw invalid(options.configPath, problems);
  servers.sort((a, b) => a.name.localeCompare(b.name));
  const plugins = parsePlugins(file.output.mcpproxy.plugins, dirname(options.configPath), env, problems);
  if (problems.length > 0) throw invalid(options.configPath, problems);
  const dataDir = expandPath(settings.dataDir, env, cwd);
  const logFile = settings.logFile ? expandPath(settings.logFile, env, cwd) : "";
  return Object.freeze({
    ...settings,
    dataDir,
    logFile,
    configPath: options.configPath,
    plugins: Object.freeze(plugins),
    servers: Object.freeze(servers),
  });
}

function resolveSettings(
  section: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
  overrides: SettingOverrides,
  problems: ExpansionProblem[],
): Settings {
  const resolved: Record<string, unknown> = { ...defaults(env) };
  for (const key of Object.keys(section)) {
    if (!(key in SETTINGS) && !FILE_ONLY_SETTINGS.has(key)) {
      problems.push({
        path: `mcpproxy.${key}`,
        message: `unknown setting (known: ${Object.keys(SETTINGS).join(", ")})`,
      });
    }
  }
  for (const [name, setting] of Object.entries(SETTINGS) as [SettingName, (typeof SETTINGS)[SettingName]][]) {
    const layers: { path: string; value: unknown }[] = [];
    if (section[name] !== undefined) {
      layers.push({
        path: `mcpproxy.${name}`,
        value: expandDeep(section[name], env, `mcpproxy.${name}`, problems),
      });
    }
    const fromEnv = env[setting.env];
    if (fromEnv !== undefined && fromEnv !== "") layers.push({ path: setting.env, value: fromEnv });
    const fromFlag = overrides[name];
    if (fromFlag !== undefined) layers.push({ path: fromFlag.flag, value: fromFlag.value });
    for (const layer of layers) {
      const parsed = v.safeParse(setting.schema as v.GenericSchema, layer.value);
      if (parsed.success) resolved[name] = parsed.output;
      else problems.push({ path: layer.path, message: parsed.issues[0]?.message ?? "is invalid" });
    }
  }
  return resolved as Settings;
}

function parseServer(
  name: string,
  entry: unknown,
  env: Readonly<Record<string, string | undefined>>,
  configDir: string,
  problems: ExpansionProblem[],
): ServerConfig | undefined {
  const path = `mcpServers.${name}`;
  if (name.trim() === "") {
    problems.push({ path, message: "a server name must not be empty" });
    return undefined;
  }
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
    problems.push({ path, message: "must be an object with a command (stdio) or a url (HTTP/SSE)" });
    return undefined;
  }
  const record = entry as Record<string, unknown>;
  const isEnabled = record.enabled !== false && record.disabled !== true;
  // A disabled server is never started, so a variable it needs may legitimately be unset.
  const expansionProblems: ExpansionProblem[] = [];
  const expanded = expandDeep(record, env, path, expansionProblems) as Record<string, unknown>;
  if (isEnabled) problems.push(...expansionProblems);

  const hasCommand = "command" in record;
  const hasUrl = "url" in record;
  if (hasCommand === hasUrl) {
    problems.push({
      path,
      message: hasCommand
        ? "has both command and url; keep command for stdio or url for HTTP/SSE"
        : "needs a command (stdio) or a url (HTTP/SSE)",
    });
    return undefined;
  }
  const parsed = hasCommand
    ? v.safeParse(StdioServerSchema, expanded)
    : v.safeParse(HttpServerSchema, expanded);
  if (!parsed.success) {
    problems.push(...parsed.issues.map((issue) => issueToProblem(issue, path)));
    return undefined;
  }
  const base = { name, enabled: isEnabled, timeoutMs: parsed.output.timeoutMs ?? DEFAULT_TIMEOUT_MS };
  if ("command" in parsed.output) {
    const out = parsed.output;
    return {
      ...base,
      transport: "stdio",
      command: out.command,
      args: out.args ?? [],
      env: out.env ?? {},
      // Relative to the config file, like plugin paths: the proxy's own directory is arbitrary.
      cwd: out.cwd === undefined ? undefined : expandPath(out.cwd, env, configDir),
    };
  }
  const out = parsed.output;
  const declared = out.transport ?? out.type;
  const isSse =
    declared === "sse" ||
    (declared === undefined && new URL(out.url).pathname.replace(/\/+$/, "").endsWith("/sse"));
  if (!/^https?:$/.test(new URL(out.url).protocol)) {
    problems.push({ path: `${path}.url`, message: "must be an http:// or https:// URL" });
    return undefined;
  }
  return { ...base, transport: isSse ? "sse" : "streamable-http", url: out.url, headers: out.headers ?? {} };
}

/** Settings that exist in the file only (no environment variable or flag). */
const FILE_ONLY_SETTINGS = new Set(["plugins"]);

function parsePlugins(
  raw: unknown,
  configDir: string,
  env: Readonly<Record<string, string | undefined>>,
  problems: ExpansionProblem[],
): { path: string; options?: unknown }[] {
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
        },
  );
}

/** A path setting: a leading `~` is the home directory, and a relative path is taken from `base`. */
export function expandPath(
  path: string,
  env: Readonly<Record<string, string | undefined>>,
  base: string,
): string {
  if (path === "~" || path.startsWith("~/")) return join(homeDir(env), path.slice(1));
  return resolve(base, path);
}

function issueToProblem(issue: v.BaseIssue<unknown>, prefix: string): ExpansionProblem {
  const dotPath = v.getDotPath(issue);
  const path = [prefix, dotPath].filter(Boolean).join(".") || "(top level)";
  return { path, message: issue.message };
}

function invalid(configPath: string, problems: readonly ExpansionProblem[]): ProxyError {
  const details = problems.map((problem) => `${problem.path}: ${problem.message}`);
  return new ProxyError(
    "CONFIG_INVALID",
    `Config ${configPath} has ${problems.length} problem${problems.length === 1 ? "" : "s"}; fix ${problems.length === 1 ? "it" : "them"} and run again.`,
    { details },
  );
}
