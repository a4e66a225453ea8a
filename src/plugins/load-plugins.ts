import { existsSync } from "node:fs";
import * as valibot from "valibot";
import { describeError, ProxyError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Plugin } from "../plugin-api.ts";

/**
 * Loads user plugins named in the config, in the compiled binary, at run time: each file is
 * imported (Bun runs TypeScript as it is), its default export checked, and its options checked
 * against the schema it declares. A file that does not load, or exports something that is not a
 * plugin, is named with the reason, and the proxy does not start without it (exit 2): a plugin
 * that redacts or guards must never be silently absent. One marked `optional` is left out with a
 * warning instead. Options that fail their schema are always a config error (exit 2).
 */
export interface PluginSpec {
  /** Absolute path of the plugin file. */
  path: string;
  options?: unknown;
  /** Leave it out with a warning when it cannot be loaded. */
  optional?: boolean;
}

export interface LoadedPlugin {
  plugin: Plugin;
  options: unknown;
  /** Where it came from, for messages: the file, or "built-in". */
  source: string;
}

const HOOKS = ["onToolsChanged", "beforeToolCall", "transformToolResult", "rankResults"] as const;
export type HookName = (typeof HOOKS)[number];
const MEMBERS = new Set<string>(["name", "order", "optionsSchema", "setup", "dispose", ...HOOKS]);

let isValibotProvided = false;

/**
 * Plugins run outside the project, where `valibot` is not installed: the binary hands them its own,
 * so `import * as v from "valibot"` works for an options schema from any directory.
 */
function provideModulesToPlugins(): void {
  if (isValibotProvided) return;
  isValibotProvided = true;
  Bun.plugin({
    name: "mcpproxy-plugin-modules",
    setup(build) {
      build.module("valibot", () => ({ exports: { ...valibot }, loader: "object" }));
    },
  });
}

export async function loadPlugins(
  specs: readonly PluginSpec[],
  options: { strict: boolean; logger: Logger },
): Promise<LoadedPlugin[]> {
  if (specs.length > 0) provideModulesToPlugins();
  const loaded: LoadedPlugin[] = [];
  const problems: string[] = [];
  const skipped: string[] = [];
  for (const spec of specs) {
    try {
      const plugin = await importPlugin(spec.path);
      const warnings = unknownMembers(plugin);
      if (warnings.length > 0) {
        if (options.strict) throw new Error(warnings.join("; "));
        for (const warning of warnings)
          options.logger.warn(`plugin ${plugin.name} (${spec.path}): ${warning}`);
      }
      if (loaded.some((other) => other.plugin.name === plugin.name)) {
        throw new Error(`another plugin is already named "${plugin.name}"; plugin names must be unique`);
      }
      loaded.push({ plugin, options: await validOptions(plugin, spec), source: spec.path });
    } catch (error) {
      if (error instanceof ProxyError && error.code === "CONFIG_INVALID") throw error;
      (spec.optional ? skipped : problems).push(`${spec.path}: ${describeError(error)}`);
    }
  }
  if (problems.length > 0) {
    throw new ProxyError(
      "PLUGIN_UNAVAILABLE",
      `${problems.length === 1 ? "A plugin" : `${problems.length} plugins`} named in the config could not be loaded, ` +
        'and mcpproxy does not run without them: fix or remove them, or mark one {"path": …, "optional": true} to run without it.',
      { details: problems },
    );
  }
  for (const problem of skipped) options.logger.warn(`optional plugin not loaded: ${problem}`);
  return loaded;
}

async function importPlugin(path: string): Promise<Plugin> {
  if (!existsSync(path)) throw new Error("the file does not exist");
  let module: { default?: unknown };
  try {
    module = (await import(path)) as { default?: unknown };
  } catch (error) {
    throw new Error(`it failed to load: ${describeError(error)}`, { cause: error });
  }
  const candidate = module.default;
  if (candidate === null || typeof candidate !== "object") {
    throw new Error("it has no default export that is a plugin object (export default { name, …hooks })");
  }
  const plugin = candidate as Record<string, unknown>;
  if (typeof plugin.name !== "string" || plugin.name.trim() === "") {
    throw new Error("its default export has no name (a plugin needs a unique `name` string)");
  }
  for (const member of ["setup", "dispose", ...HOOKS]) {
    if (plugin[member] !== undefined && typeof plugin[member] !== "function") {
      throw new Error(`plugin ${plugin.name}: ${member} must be a function`);
    }
  }
  if (plugin.order !== undefined && plugin.order !== "pre" && plugin.order !== "post") {
    throw new Error(`plugin ${plugin.name}: order must be "pre" or "post"`);
  }
  return candidate as Plugin;
}

/** Members that are not part of the API: usually a misspelt hook, which would silently never run. */
function unknownMembers(plugin: Plugin): string[] {
  return Object.keys(plugin)
    .filter(
      (key) => !MEMBERS.has(key) && typeof (plugin as unknown as Record<string, unknown>)[key] === "function",
    )
    .map((key) => {
      const close = [...MEMBERS].find((known) => known.toLowerCase() === key.toLowerCase());
      return `${key} is not a hook and will never run${close ? ` (did you mean ${close}?)` : ""}`;
    });
}

async function validOptions(plugin: Plugin, spec: PluginSpec): Promise<unknown> {
  const schema = plugin.optionsSchema?.["~standard"];
  if (!schema) return spec.options;
  const result = (await schema.validate(spec.options ?? {})) as {
    value?: unknown;
    issues?: readonly { message: string; path?: readonly unknown[] }[];
  };
  if (!result.issues) return result.value;
  throw new ProxyError("CONFIG_INVALID", `The options of plugin ${plugin.name} (${spec.path}) are invalid.`, {
    details: result.issues.map((issue) => {
      const path = (issue.path ?? []).map((part) =>
        typeof part === "object" && part !== null && "key" in part ? String(part.key) : String(part),
      );
      return `${["options", ...path].join(".")}: ${issue.message}`;
    }),
  });
}
