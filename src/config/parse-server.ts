import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import * as v from "valibot";
import { escapeUnshown } from "../security/hidden-characters.ts";
import { agentMarkOf, isAwaitingApproval } from "../security/launch-spec.ts";
import { serverNameProblem } from "../security/server-names.ts";
import type { ExpansionProblem } from "./expand-env.ts";
import { expandDeep, PLACEHOLDER_ENV, withPlaceholders } from "./expand-env.ts";
import { IGNORED_SERVER_KEYS, unknownKeys } from "./known-keys.ts";
import type { CallLimits } from "./limit-settings.ts";
import { LIMIT_KEYS, type LimitSettings, resolveLimits } from "./limit-settings.ts";
import { expandPath } from "./paths.ts";
import { HttpServerSchema, StdioServerSchema } from "./server-schema.ts";
import type { ToolOverride } from "./tool-override-settings.ts";
import { overrideKeyProblems, resolveToolOverrides } from "./tool-override-settings.ts";

/**
 * One entry of the `mcpServers` map (or VS Code's `servers` map), checked and resolved: the
 * formats of Claude Desktop, Cursor, VS Code, Claude Code, Cline and Windsurf paste as they are.
 */
const DEFAULT_TIMEOUT_MS = 30_000;

interface ServerBase {
  name: string;
  enabled: boolean;
  timeoutMs: number;
  /** How long one call may go without an answer or progress; unset, the proxy-wide callTimeoutMs. */
  callTimeoutMs?: number | undefined;
  /**
   * Started on first use rather than with `serve`: as written here (false included), resolved with
   * `mcpproxy.lazy` and `preconnect` by lazy-start.ts, after which it is true or absent.
   */
  lazy?: boolean | undefined;
  /** Its own `autoRetryFallback`, when a person set one (fallback-retry.ts). */
  autoRetryFallback?: boolean | undefined;
  /** `false`: arguments are forwarded without checking them against the tool's input schema. */
  validateArguments?: boolean | undefined;
  /** What a new or changed tool gets: quarantined until approved (`pin`, the default) or accepted (`auto`). */
  trust?: "pin" | "auto" | undefined;
  /** Every tool is held for approval on first sight (a server an agent added). */
  quarantined?: boolean | undefined;
  /** The roots the server is told about when it asks outside a call. */
  roots?: readonly { uri: string; name: string }[] | undefined;
  /**
   * The entry was written by an agent (`upstream_servers`): its tools are held for approval on
   * first sight, like a `quarantined` server's.
   */
  writtenByAgent?: boolean | undefined;
  /**
   * Written by an agent and its launch spec not approved by a person (`mcpproxy approve`): nothing
   * of it starts or connects, and its values are the literal ones (no `${VAR}` expanded). `launch`:
   * what it runs is new (added or changed by the agent); `enable`: the agent only enabled it.
   */
  awaitingApproval?: "launch" | "enable" | undefined;
  /** Its sampling, elicitation and roots requests made outside any call reach a session that called it. */
  relayOutsideCalls?: boolean | undefined;
  /** Bounds on its whole tool list; unset, the proxy-wide maxTools and maxToolListBytes. */
  maxTools?: number | undefined;
  maxToolListBytes?: number | undefined;
  /** Its call limits (src/limits/), its own over the proxy-wide ones; unset, calls are not limited. */
  limits?: CallLimits | undefined;
  /** Labels a profile may select it by (`mcpproxy.profiles`, profile-settings.ts). */
  tags?: readonly string[] | undefined;
  /** A person's `tools` overrides with `disabledTools` folded in, by the upstream's tool name. */
  toolOverrides?: Readonly<Record<string, ToolOverride>> | undefined;
  /**
   * Why it cannot start as configured: a variable it needs is not set (each named with where it is
   * used). It fails alone and is never started (launchRefusal); the other servers serve, and the
   * CLI can still disable or remove it. Its values are placeholders, never to be used.
   */
  configProblem?: string | undefined;
}
export interface StdioServerConfig extends ServerBase {
  transport: "stdio";
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  /** The person's variables it gets beyond the baseline (`true`: all of them); see src/upstream/child-env.ts. */
  inheritEnv?: true | readonly string[] | undefined;
  cwd?: string | undefined;
}
export interface HttpServerConfig extends ServerBase {
  transport: "streamable-http" | "sse";
  url: string;
  headers: Readonly<Record<string, string>>;
  /** OAuth settings; `false`: never log in (see server-schema.ts). */
  oauth?:
    | false
    | {
        clientId?: string | undefined;
        clientSecret?: string | undefined;
        /** A client metadata document URL used as the client id where the authorization server takes one. */
        clientMetadataUrl?: string | undefined;
        scopes?: string[] | undefined;
      }
    | undefined;
}
export type ServerConfig = StdioServerConfig | HttpServerConfig;

/** What the `mcpproxy` section gives every server entry. */
export interface ServerDefaults {
  /** `mcpproxy.inheritEnv`: applies to the person's own entries, not to those an agent wrote. */
  inheritEnv?: boolean | readonly string[] | undefined;
  /** The proxy-wide call limits (`mcpproxy.rateLimit`, …), under each server's own. */
  limits?: LimitSettings | undefined;
}

export function parseServer(
  name: string,
  entry: unknown,
  env: Readonly<Record<string, string | undefined>>,
  configDir: string,
  problems: ExpansionProblem[],
  section = "mcpServers",
  defaults: ServerDefaults = {},
): ServerConfig | undefined {
  const { inheritEnv } = defaults;
  const path = `${section}.${name}`;
  const badName = serverNameProblem(name);
  if (badName) {
    // Shown escaped: a name refused for its bidi controls must not reorder the error line.
    problems.push({ path: `${section}.${escapeUnshown(name)}`, message: badName });
    return undefined;
  }
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
    problems.push({ path, message: "must be an object with a command (stdio) or a url (HTTP/SSE)" });
    return undefined;
  }
  const record = { ...(entry as Record<string, unknown>) };
  // Windsurf writes the URL of a remote server as `serverUrl`.
  if (record.url === undefined && typeof record.serverUrl === "string") {
    record.url = record.serverUrl;
    delete record.serverUrl;
  }
  problems.push(...unknownKeys(record, SERVER_KEYS, path, IGNORED_SERVER_KEYS));
  problems.push(...overrideKeyProblems(record.tools, path));
  const isEnabled = record.enabled !== false && record.disabled !== true;
  // What an agent wrote is not expanded from the proxy's environment before a person approves it.
  const isAwaiting = isAwaitingApproval(entry as Record<string, unknown>);
  const isAgentWritten = Object.hasOwn(record, "agent");
  if (isAgentWritten && !agentMarkOf(record)) {
    problems.push({ path: `${path}.agent`, message: "is written by upstream_servers and must be an object" });
  }
  // The mark records what the entry was before; it is shown by `approve`, never expanded or run.
  delete record.agent;
  // A disabled server is never started, so a variable it needs may legitimately be unset; an
  // enabled one that lacks one fails alone (configProblem), its shape checked with placeholders.
  const expansionProblems: ExpansionProblem[] = [];
  let expanded = expandDeep(record, isAwaiting ? PLACEHOLDER_ENV : env, path, expansionProblems) as Record<
    string,
    unknown
  >;
  const unset = isEnabled && !isAwaiting ? expansionProblems : [];
  if (unset.length > 0)
    expanded = expandDeep(record, withPlaceholders(env), path, []) as Record<string, unknown>;
  // "path — message", not "path: message": a path such as env.API_TOKEN followed by a colon reads
  // as a secret's assignment to the log's redaction, and the message is shown redacted.
  const configProblem =
    unset.length > 0 ? unset.map((problem) => `${problem.path} — ${problem.message}`).join("; ") : undefined;
  // With a variable missing, a value that holds one may well be malformed: that is the variable's
  // problem, already told; any other problem is reported as for every server.
  const report = (found: ExpansionProblem[]) => {
    const own = configProblem ? found.filter((problem) => !holdsVariable(record, problem.path, path)) : found;
    problems.push(...own);
    return own.length === 0;
  };

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
    const isOnlyTheVariables = report(parsed.issues.map((issue) => issueToProblem(issue, path)));
    return configProblem && isOnlyTheVariables ? unstartable(name, hasCommand, configProblem) : undefined;
  }
  const own = parsed.output;
  // Set one by one, in this order, rather than spread from an object per setting: with 20,000
  // servers those were 340,000 objects made and copied at every load.
  const base: ServerBase = { name, enabled: isEnabled, timeoutMs: own.timeoutMs ?? DEFAULT_TIMEOUT_MS };
  if (own.callTimeoutMs !== undefined) base.callTimeoutMs = own.callTimeoutMs;
  if (own.lazy !== undefined) base.lazy = own.lazy;
  if (own.autoRetryFallback !== undefined) base.autoRetryFallback = own.autoRetryFallback;
  if (own.validateArguments === false) base.validateArguments = false;
  if (own.trust) base.trust = own.trust;
  if (own.quarantined) base.quarantined = true;
  if (isAgentWritten) base.writtenByAgent = true;
  if (isAwaiting)
    base.awaitingApproval =
      agentMarkOf(entry as Record<string, unknown>)?.change === "enabled" ? "enable" : "launch";
  if (own.relayOutsideCalls) base.relayOutsideCalls = true;
  if (own.maxTools !== undefined) base.maxTools = own.maxTools;
  if (own.maxToolListBytes !== undefined) base.maxToolListBytes = own.maxToolListBytes;
  if (configProblem) base.configProblem = configProblem;
  if (own.tags) base.tags = [...new Set(own.tags)];
  const limits = defaults.limits && resolveLimits(own as Partial<LimitSettings>, defaults.limits);
  if (limits) base.limits = limits;
  const { toolOverrides } = resolveToolOverrides(own, path, problems);
  if (toolOverrides) base.toolOverrides = toolOverrides;
  if (own.roots) base.roots = own.roots.map((root) => rootOf(root, env, configDir));
  if ("command" in parsed.output) {
    const out = parsed.output;
    return Object.assign(base, {
      transport: "stdio" as const,
      command: out.command,
      args: out.args ?? [],
      env: out.env ?? {},
      ...inherited(out.inheritEnv ?? (isAgentWritten ? undefined : inheritEnv)),
      // Relative to the config file, like plugin paths: the proxy's own directory is arbitrary.
      cwd: out.cwd === undefined ? undefined : expandPath(out.cwd, env, configDir),
    });
  }
  if (Object.hasOwn(record, "inheritEnv")) {
    problems.push({
      path: `${path}.inheritEnv`,
      message: "is for servers with a command (stdio): a remote server gets no environment",
    });
    return undefined;
  }
  const out = parsed.output;
  const declared = out.transport ?? out.type;
  // Parsed once (the schema checked it parses): with 20,000 servers each parse counts.
  const url = new URL(out.url);
  const isSse =
    declared === "sse" || (declared === undefined && url.pathname.replace(/\/+$/, "").endsWith("/sse"));
  if (!/^https?:$/.test(url.protocol)) {
    const isOnlyTheVariables = report([
      { path: `${path}.url`, message: "must be an http:// or https:// URL" },
    ]);
    return configProblem && isOnlyTheVariables ? unstartable(name, false, configProblem) : undefined;
  }
  return Object.assign(base, {
    transport: isSse ? ("sse" as const) : ("streamable-http" as const),
    url: out.url,
    headers: out.headers ?? {},
    ...(out.oauth !== undefined ? { oauth: out.oauth } : {}),
  });
}

/** `inheritEnv` as the server config holds it: absent when nothing beyond the baseline is inherited. */
function inherited(value: boolean | readonly string[] | undefined): {
  inheritEnv?: true | readonly string[];
} {
  if (value === true) return { inheritEnv: true };
  return Array.isArray(value) && value.length > 0 ? { inheritEnv: [...new Set(value)] } : {};
}

/** Every key a server entry may have. */
export const SERVER_KEYS = [
  "command",
  "args",
  "env",
  "inheritEnv",
  "cwd",
  "url",
  "headers",
  "type",
  "transport",
  "enabled",
  "disabled",
  "timeoutMs",
  "callTimeoutMs",
  "lazy",
  "autoRetryFallback",
  "validateArguments",
  "trust",
  "roots",
  "oauth",
  "quarantined",
  "relayOutsideCalls",
  "maxTools",
  "maxToolListBytes",
  "disabledTools",
  "tools",
  "tags",
  ...LIMIT_KEYS,
  "agent",
  "approved",
] as const;

/** A server that lacks a variable and whose shape cannot be told without it: it only fails, with why. */
function unstartable(name: string, isStdio: boolean, configProblem: string): ServerConfig {
  const base = { name, enabled: true, timeoutMs: DEFAULT_TIMEOUT_MS, configProblem };
  return isStdio
    ? { ...base, transport: "stdio", command: "", args: [], env: {} }
    : { ...base, transport: "streamable-http", url: "", headers: {} };
}

/** Whether the raw value at a problem's path (or anything under it) holds a `${…}` reference. */
function holdsVariable(record: Record<string, unknown>, problemPath: string, entryPath: string): boolean {
  if (problemPath !== entryPath && !problemPath.startsWith(`${entryPath}.`)) return false;
  let value: unknown = record;
  for (const key of problemPath
    .slice(entryPath.length + 1)
    .split(".")
    .filter(Boolean)) {
    if (value === null || typeof value !== "object") return false;
    value = (value as Record<string, unknown>)[key];
  }
  return JSON.stringify(value ?? null).includes("${");
}

/** A configured root: a file:// URI as it is, or a path (relative to the config file) made one. */
function rootOf(root: string, env: Readonly<Record<string, string | undefined>>, configDir: string) {
  const uri = /^[a-z][a-z0-9+.-]*:\/\//i.test(root)
    ? root
    : pathToFileURL(expandPath(root, env, configDir)).href;
  return { uri, name: basename(decodeURIComponent(new URL(uri).pathname)) || uri };
}

export function issueToProblem(issue: v.BaseIssue<unknown>, prefix: string): ExpansionProblem {
  const dotPath = v.getDotPath(issue);
  const path = [prefix, dotPath].filter(Boolean).join(".") || "(top level)";
  return { path, message: issue.message };
}
