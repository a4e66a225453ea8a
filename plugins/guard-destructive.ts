/**
 * A policy hook: refuses calls to tools whose server marks them destructive (`destructiveHint`),
 * unless the tool or its server is on the `allow` list. The agent gets an error result that says
 * why, and can tell the user. `strict: true` also refuses tools that do not say they are
 * read-only, as the MCP spec's defaults assume of them.
 * Annotations are hints a server gives about itself: this guards against mistakes, not against a
 * malicious server.
 *
 *   "plugins": [{ "path": "./guard-destructive.ts", "options": { "allow": ["memory", "github__delete_branch"] } }]
 */
import type { Plugin } from "../src/plugin-api.ts";

interface Options {
  /** Servers (`github`) or public tool names (`github__delete_branch`) that may run anyway. */
  allow: string[];
  strict: boolean;
}

let options: Options = { allow: [], strict: false };

export default {
  name: "guard-destructive",
  order: "pre",
  setup(context) {
    const given = (context.options ?? {}) as Partial<Options>;
    if (
      given.allow !== undefined &&
      (!Array.isArray(given.allow) || given.allow.some((a) => typeof a !== "string"))
    ) {
      throw new Error("options.allow must be an array of server or tool names");
    }
    options = { allow: given.allow ?? [], strict: given.strict === true };
  },
  beforeToolCall(call) {
    if (options.allow.includes(call.server) || options.allow.includes(call.name)) return undefined;
    const { destructiveHint, readOnlyHint } = call.annotations;
    const isDestructive = destructiveHint === true || (options.strict && readOnlyHint !== true);
    if (!isDestructive) return undefined;
    return {
      reject:
        `${call.name} is marked as destructive by its server, and this proxy is set to refuse destructive tools ` +
        "(guard-destructive plugin). Ask the user to allow it, or use a read-only tool.",
    };
  },
} satisfies Plugin;
