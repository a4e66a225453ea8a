import { describeError, ProxyError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type {
  RankedHit,
  RankInput,
  ToolCall,
  ToolResult,
  ToolResultInput,
  ToolsChangedEvent,
} from "../plugin-api.ts";
import type { HookName, LoadedPlugin } from "./load-plugins.ts";

/**
 * Runs the plugins' hooks, each isolated: time-boxed, a throw or a timeout keeps the previous value
 * and is logged with the plugin and the hook, and a plugin that fails 5 times in a row is switched
 * off with one warning. With `strict` every failure is a PLUGIN_FAILED error instead. A hook no
 * plugin has costs one array check.
 */
export interface PluginRunnerOptions {
  plugins: readonly LoadedPlugin[];
  logger: Logger;
  /** How long one hook call may take. */
  timeoutMs: number;
  strict: boolean;
  dataDir: string;
}

type CallDecision = { call: ToolCall } | { reject: string; plugin: string };

export interface PluginRunner {
  /** Plugin names in the order they run. */
  readonly names: readonly string[];
  has(hook: HookName): boolean;
  /** Runs every `setup`, in order. */
  setup(): Promise<void>;
  /** Runs every `dispose`, in reverse order; returns the failures. */
  dispose(): Promise<string[]>;
  /** Notify: all plugins in parallel; resolves when all are done (callers need not wait). */
  toolsChanged(event: ToolsChangedEvent): Promise<void>;
  beforeToolCall(call: ToolCall): Promise<CallDecision>;
  transformToolResult(input: ToolResultInput): Promise<ToolResult>;
  /** The hits as the rankers left them, or undefined when no ranker changed anything. */
  rankResults(input: RankInput): Promise<readonly RankedHit[] | undefined>;
}

export const FAILURES_BEFORE_SWITCH_OFF = 5;

interface Entry {
  loaded: LoadedPlugin;
  name: string;
  failures: number;
  isOff: boolean;
}

const TIER = { pre: 0, undefined: 1, post: 2 } as const;

export function createPluginRunner(options: PluginRunnerOptions): PluginRunner {
  const entries: Entry[] = [...options.plugins]
    .map((loaded, at) => ({ loaded, at }))
    .sort((a, b) => TIER[`${a.loaded.plugin.order}`] - TIER[`${b.loaded.plugin.order}`] || a.at - b.at)
    .map(({ loaded }) => ({ loaded, name: loaded.plugin.name, failures: 0, isOff: false }));
  const withHook = Object.fromEntries(
    (["onToolsChanged", "beforeToolCall", "transformToolResult", "rankResults"] as const).map((hook) => [
      hook,
      entries.filter((entry) => typeof entry.loaded.plugin[hook] === "function"),
    ]),
  ) as Record<HookName, Entry[]>;
  const shutdown = new AbortController();
  const log = options.logger.child("plugins");

  const fail = (entry: Entry, hook: string, reason: string): void => {
    const message = `plugin ${entry.name}: ${hook} failed: ${reason}`;
    if (options.strict) throw new ProxyError("PLUGIN_FAILED", `${message} (--strict-plugins)`);
    entry.failures++;
    log.warn(`${message}; kept the previous value`);
    if (entry.failures >= FAILURES_BEFORE_SWITCH_OFF && !entry.isOff) {
      entry.isOff = true;
      log.warn(
        `plugin ${entry.name} failed ${entry.failures} times in a row and is switched off until restart`,
      );
    }
  };

  /** One hook call, time-boxed; `undefined` as the outcome means it failed (already reported). */
  const invoke = async <T>(
    entry: Entry,
    hook: string,
    run: () => unknown,
    check: (value: unknown) => string | undefined = () => undefined,
  ): Promise<{ value: T } | undefined> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let reason: string;
    try {
      const value = await Promise.race([
        Promise.resolve().then(run),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`did not finish within ${options.timeoutMs} ms`)),
            options.timeoutMs,
          );
        }),
      ]);
      const problem = check(value);
      if (!problem) {
        entry.failures = 0;
        return { value: value as T };
      }
      reason = problem;
    } catch (error) {
      reason = describeError(error);
    } finally {
      clearTimeout(timer);
    }
    fail(entry, hook, reason);
    return undefined;
  };

  const active = (hook: HookName) => withHook[hook].filter((entry) => !entry.isOff);

  return {
    names: entries.map((entry) => entry.name),
    has: (hook) => withHook[hook].length > 0,

    async setup() {
      for (const entry of entries) {
        const { plugin, options: pluginOptions } = entry.loaded;
        if (!plugin.setup) continue;
        const context = Object.freeze({
          options: pluginOptions,
          logger: options.logger.child(`plugin:${entry.name}`),
          dataDir: options.dataDir,
          signal: shutdown.signal,
        });
        const outcome = await invoke(entry, "setup", () => plugin.setup?.(context));
        if (!outcome) {
          entry.isOff = true;
          log.warn(`plugin ${entry.name} is off: its setup failed`);
        }
      }
    },

    async dispose() {
      shutdown.abort();
      const failures: string[] = [];
      for (const entry of [...entries].reverse()) {
        try {
          await entry.loaded.plugin.dispose?.();
        } catch (error) {
          failures.push(`plugin ${entry.name}: dispose failed: ${describeError(error)}`);
        }
      }
      return failures;
    },

    async toolsChanged(event) {
      const frozen = Object.freeze({ ...event, added: [...event.added], removed: [...event.removed] });
      await Promise.all(
        active("onToolsChanged").map((entry) =>
          invoke(entry, "onToolsChanged", () => entry.loaded.plugin.onToolsChanged?.(frozen)).catch((error) =>
            log.error(describeError(error)),
          ),
        ),
      );
    },

    async beforeToolCall(call) {
      let current = call;
      for (const entry of active("beforeToolCall")) {
        const input = Object.freeze({ ...current, arguments: Object.freeze({ ...current.arguments }) });
        const outcome = await invoke<{ arguments?: Record<string, unknown>; reject?: string } | undefined>(
          entry,
          "beforeToolCall",
          () => entry.loaded.plugin.beforeToolCall?.(input),
          checkCallDecision,
        );
        if (!outcome?.value) continue;
        if (typeof outcome.value.reject === "string")
          return { reject: outcome.value.reject, plugin: entry.name };
        if (outcome.value.arguments) current = { ...current, arguments: outcome.value.arguments };
      }
      return { call: current };
    },

    async transformToolResult(input) {
      let result = input.result;
      for (const entry of active("transformToolResult")) {
        const frozen = Object.freeze({
          ...input,
          arguments: Object.freeze({ ...input.arguments }),
          result: Object.freeze({
            ...result,
            content: Object.freeze(result.content.map((b) => Object.freeze({ ...b }))),
          }),
        }) as ToolResultInput;
        const outcome = await invoke<ToolResult | undefined>(
          entry,
          "transformToolResult",
          () => entry.loaded.plugin.transformToolResult?.(frozen),
          checkToolResult,
        );
        if (outcome?.value) result = outcome.value;
      }
      return result;
    },

    async rankResults(input) {
      const rankers = active("rankResults");
      if (rankers.length === 0) return undefined;
      let hits: readonly RankedHit[] = input.hits;
      let isChanged = false;
      for (const entry of rankers) {
        const frozen = Object.freeze({
          query: input.query,
          hits: Object.freeze(hits.map((hit) => Object.freeze({ ...hit }))),
        });
        const outcome = await invoke<readonly RankedHit[] | undefined>(
          entry,
          "rankResults",
          () => entry.loaded.plugin.rankResults?.(frozen as RankInput),
          checkRankedHits,
        );
        if (outcome?.value) {
          hits = outcome.value;
          isChanged = true;
        }
      }
      return isChanged ? hits : undefined;
    },
  };
}

function checkCallDecision(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object") return "returned something that is not {arguments} or {reject}";
  const { arguments: args, reject } = value as { arguments?: unknown; reject?: unknown };
  if (reject !== undefined)
    return typeof reject === "string" ? undefined : "returned a reject that is not a string";
  if (args !== undefined && (args === null || typeof args !== "object" || Array.isArray(args))) {
    return "returned arguments that are not an object";
  }
  return undefined;
}

function checkToolResult(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  const content = (value as { content?: unknown }).content;
  return typeof value === "object" && Array.isArray(content)
    ? undefined
    : "returned something that is not a tool result (an object with a content array)";
}

function checkRankedHits(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) return "returned something that is not an array of hits";
  const bad = value.find(
    (hit) =>
      hit === null ||
      typeof hit !== "object" ||
      typeof (hit as RankedHit).name !== "string" ||
      typeof (hit as RankedHit).score !== "number" ||
      !Number.isFinite((hit as RankedHit).score),
  );
  return bad === undefined ? undefined : "returned a hit without a name and a finite score";
}
