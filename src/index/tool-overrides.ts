import { createHash } from "node:crypto";
import type { ToolOverride } from "../config/tool-override-settings.ts";
import type { UpstreamTool } from "../upstream-tool.ts";

/** Overrides by server, then by the upstream's own tool name. */
export type ToolOverrides = ReadonlyMap<string, Readonly<Record<string, ToolOverride>>>;

export const NO_OVERRIDES: ToolOverrides = new Map();

export function overrideOf(overrides: ToolOverrides, server: string, tool: string): ToolOverride | undefined {
  const own = overrides.get(server);
  return own && Object.hasOwn(own, tool) ? own[tool] : undefined;
}

export function isDisabled(override: ToolOverride | undefined): boolean {
  return override?.enabled === false;
}

/** Whether the override changes what is shown (rather than only whether it is shown). */
function reshapes(override: ToolOverride): boolean {
  return (
    override.name !== undefined || override.description !== undefined || override.annotations !== undefined
  );
}

/** The definition an agent sees: the upstream's, with the person's name, description and annotations. */
export function shownDefinition(definition: UpstreamTool, override: ToolOverride | undefined): UpstreamTool {
  if (!override || !reshapes(override)) return definition;
  const shown: UpstreamTool = { ...definition };
  if (override.name !== undefined) shown.name = override.name;
  if (override.description !== undefined) shown.description = override.description;
  if (override.annotations !== undefined) {
    const upstream = definition.annotations;
    const base = upstream && typeof upstream === "object" && !Array.isArray(upstream) ? upstream : {};
    shown.annotations = { ...base, ...override.annotations };
  }
  return shown;
}

/**
 * One string that changes whenever the public view of any tool would: it stamps the search
 * snapshot and the stored names, so a run with other overrides rebuilds them instead of serving
 * the last run's descriptions. Empty without overrides (the stamps of earlier versions hold).
 */
export function overridesFingerprint(overrides: ToolOverrides): string {
  const entries = [...overrides.entries()]
    .filter(([, tools]) => Object.keys(tools).length > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([server, tools]) => [
      server,
      Object.entries(tools).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    ]);
  if (entries.length === 0) return "";
  return createHash("sha256").update(JSON.stringify(entries)).digest("hex").slice(0, 16);
}

/** The (server, tool) pairs whose override differs between two sets, either way. */
export function changedOverrides(
  before: ToolOverrides,
  after: ToolOverrides,
): { server: string; tool: string }[] {
  const changed: { server: string; tool: string }[] = [];
  for (const server of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(server) ?? {};
    const b = after.get(server) ?? {};
    for (const tool of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (
        JSON.stringify(overrideOf(before, server, tool)) !== JSON.stringify(overrideOf(after, server, tool))
      )
        changed.push({ server, tool });
    }
  }
  return changed;
}

/** The overridden tools a server does not list (a warning: tools come and go). */
export function unlistedOverrides(
  overrides: ToolOverrides,
  server: string,
  listed: readonly { name: string }[],
): string[] {
  const names = new Set(listed.map((tool) => tool.name));
  return Object.keys(overrides.get(server) ?? {}).filter((tool) => !names.has(tool));
}
