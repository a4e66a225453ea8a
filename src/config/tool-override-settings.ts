import type { ExpansionProblem } from "./expand-env.ts";
import { unknownKeys } from "./known-keys.ts";
import { TOOL_ANNOTATION_KEYS, TOOL_OVERRIDE_KEYS } from "./server-schema.ts";

/**
 * A server entry's `disabledTools` (as Cline and Roo Code write it) and `tools` overrides, as one
 * map by the upstream's tool name. A person's settings only (security/agent-edits.ts).
 */

/** Unknown keys inside `tools.<name>` and its `annotations`, each with the closest known one. */
export function overrideKeyProblems(tools: unknown, path: string): ExpansionProblem[] {
  if (tools === null || typeof tools !== "object" || Array.isArray(tools)) return [];
  return Object.entries(tools).flatMap(([name, override]) => {
    if (override === null || typeof override !== "object" || Array.isArray(override)) return [];
    const at = `${path}.tools.${name}`;
    const annotations = (override as Record<string, unknown>).annotations;
    return [
      ...unknownKeys(override as Record<string, unknown>, TOOL_OVERRIDE_KEYS, at),
      ...(annotations !== null && typeof annotations === "object" && !Array.isArray(annotations)
        ? unknownKeys(annotations as Record<string, unknown>, TOOL_ANNOTATION_KEYS, `${at}.annotations`)
        : []),
    ];
  });
}

/** The overrides of one entry, `disabledTools` folded in as `enabled: false`; absent when none. */
export function resolveToolOverrides(
  own: {
    disabledTools?: readonly string[] | undefined;
    tools?: Readonly<Record<string, ToolOverride>> | undefined;
  },
  path: string,
  problems: ExpansionProblem[],
): { toolOverrides?: Readonly<Record<string, ToolOverride>> } {
  const overrides: Record<string, ToolOverride> = {};
  for (const [tool, override] of Object.entries(own.tools ?? {})) {
    const kept = Object.fromEntries(Object.entries(override).filter(([, value]) => value !== undefined));
    overrides[tool] = kept;
  }
  for (const tool of own.disabledTools ?? []) {
    if (overrides[tool]?.enabled === true) {
      problems.push({
        path: `${path}.tools.${tool}.enabled`,
        message: `is true, but disabledTools lists ${tool}: keep one of them`,
      });
      continue;
    }
    overrides[tool] = { ...overrides[tool], enabled: false };
  }
  return Object.keys(overrides).length > 0 ? { toolOverrides: overrides } : {};
}

/**
 * A person's changes to how an upstream's tools are shown (a server entry's `tools` and
 * `disabledTools`): hidden, renamed, re-described, annotated. They shape the catalog's public view
 * only: search documents, lists, registered tools and calls. Pinning and the poisoning scan judge
 * the upstream's own definition, which the catalog stores untouched (tool-approvals.ts), so an
 * override never hides an upstream change that needs approval.
 */
export interface ToolOverride {
  /** `false`: hidden from search and lists, and a call to it is refused. */
  enabled?: boolean | undefined;
  /** Replaces the tool part of the public name (`server__<name>`), and its own name in passthrough. */
  name?: string | undefined;
  description?: string | undefined;
  /** Merged over the upstream's annotations, key by key. */
  annotations?: Readonly<Record<string, unknown>> | undefined;
}
