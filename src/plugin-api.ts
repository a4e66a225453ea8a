/**
 * The plugin API of mcpproxy: the one file plugin authors import, and only with `import type`,
 * so a plugin needs nothing from the proxy at run time. A plugin is a `.ts` or `.js` file whose
 * default export is a plain object:
 *
 * ```ts
 * import type { Plugin } from "./plugin-api.ts";
 * export default {
 *   name: "no-deletes",
 *   beforeToolCall(call) {
 *     if (call.tool.startsWith("delete")) return { reject: "Deleting is not allowed here." };
 *   },
 * } satisfies Plugin;
 * ```
 *
 * List it in the config: `"mcpproxy": {"plugins": ["./no-deletes.ts", {"path": "./p.ts", "options": {…}}]}`
 * (paths relative to the config file). How each hook's results combine:
 *  - notify hooks (`onToolsChanged`): every plugin runs, in parallel; what they return is ignored;
 *  - transform hooks (`beforeToolCall`, `transformToolResult`, `rankResults`): plugins run one after
 *    another, each receiving what the previous one returned; returning nothing keeps the value.
 * Inputs are frozen: return a new value instead of changing the one you were given.
 * Every hook is time-boxed (2 s by default, `mcpproxy.pluginTimeoutMs`). A hook that throws or
 * times out keeps the previous value and is logged with the plugin's name and the hook; after
 * 5 failures in a row a plugin is switched off, with one warning. `--strict-plugins` turns every
 * failure into an error instead, for plugin authors' tests.
 */

/** A content block of a tool result (text, image, audio, resource, resource_link), as MCP defines it. */
export interface ContentBlock {
  type: string;
  [key: string]: unknown;
}

/** A tool result, as MCP's `CallToolResult`. */
export interface ToolResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A call on its way to an upstream server. */
export interface ToolCall {
  /** The upstream server's name in the config. */
  readonly server: string;
  /** The tool's own name on its server. */
  readonly tool: string;
  /** The public name the agent used (`server__tool`). */
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /**
   * The tool's annotations as its server declared them (readOnlyHint, destructiveHint,
   * idempotentHint, openWorldHint), or `{}`: what a policy hook decides on. Hints, not guarantees.
   */
  readonly annotations: Readonly<Record<string, unknown>>;
}

/** Replace the arguments, or refuse the call: the agent gets an `isError` result with the message. */
export type BeforeToolCallResult = { arguments: Record<string, unknown> } | { reject: string } | undefined;

export interface ToolResultInput extends ToolCall {
  readonly result: ToolResult;
}

/** One hit of a search: the shape of a `retrieve_tools` entry. */
export interface SearchHit {
  name: string;
  server: string;
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
  title?: string;
  annotations?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  /** 0–1, higher is better. */
  score: number;
}

export interface RankInput {
  readonly query: string;
  readonly hits: readonly SearchHit[];
}

/**
 * A hit a ranker returns. Only `name` and `score` are read: the definition always comes from the
 * catalog, so a ranker can reorder, drop, re-score or bring in any indexed tool, never invent one.
 */
export interface RankedHit {
  name: string;
  score: number;
}

export interface ToolsChangedEvent {
  /**
   * `retrieved`: a search registered tools in a session (dynamic routing), and maybe evicted others;
   * `upstream`: a session's registered tools changed or went away because their server changed them;
   * `catalog`: tools were indexed or removed.
   */
  readonly reason: "retrieved" | "upstream" | "catalog";
  /** The client session whose registered tools changed; absent for catalog changes. */
  readonly session?: string;
  /** Public names. */
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** Registered tools whose definition their server changed (reason `upstream`). */
  readonly updated?: readonly string[];
}

export interface PluginLogger {
  error(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  debug(message: string, fields?: Record<string, unknown>): void;
}

export interface PluginContext<Options = unknown> {
  /** The plugin's options from the config, after `optionsSchema` checked them. */
  readonly options: Options;
  /** Logs tagged with the plugin's name, where the proxy logs (stderr or its log file). */
  readonly logger: PluginLogger;
  /** The proxy's data directory, for a plugin that keeps files. */
  readonly dataDir: string;
  /** Aborted when the proxy shuts down. */
  readonly signal: AbortSignal;
}

/**
 * A schema for the options, in the Standard Schema form that valibot, zod and arktype implement.
 * The proxy provides `valibot` to plugins, so `import * as v from "valibot"` works from any
 * directory. Options that fail it are a config error (exit 2).
 */
export interface OptionsSchema<Options = unknown> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) =>
      | { readonly value: Options; readonly issues?: undefined }
      | { readonly issues: readonly { readonly message: string; readonly path?: readonly unknown[] }[] }
      | Promise<unknown>;
  };
}

type Awaitable<T> = T | Promise<T>;

export interface Plugin<Options = unknown> {
  /** Unique among the loaded plugins; used in every log line and error. */
  name: string;
  /** `pre` plugins run before the others in every hook, `post` plugins after them (default: in config order). */
  order?: "pre" | "post";
  optionsSchema?: OptionsSchema<Options>;
  /** Runs once at start, in order; a throw is logged and the plugin stays off. */
  setup?(context: PluginContext<Options>): Awaitable<void>;
  /** Runs once at shutdown, in reverse order. */
  dispose?(): Awaitable<void>;
  /** Notify: the registered tools of a session, or the catalog, changed. */
  onToolsChanged?(event: ToolsChangedEvent): Awaitable<void>;
  /** Transform: may replace the arguments of a call, or refuse it. */
  beforeToolCall?(call: ToolCall): Awaitable<BeforeToolCallResult | undefined>;
  /** Transform: may replace a tool's result before the agent sees it. */
  transformToolResult?(input: ToolResultInput): Awaitable<ToolResult | undefined>;
  /** Transform: may reorder, drop, re-score or add (indexed) tools in a search's hits. */
  rankResults?(input: RankInput): Awaitable<readonly RankedHit[] | undefined>;
}
