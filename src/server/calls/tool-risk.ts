import type { UpstreamTool } from "../../upstream-tool.ts";

/**
 * How much a tool may change, from the annotations in its definition as shown (the upstream's own,
 * which a person approved, or a person's override): 0 only reads (`readOnlyHint: true`), 1 may
 * add but not destroy (`destructiveHint: false`), 2 may destroy (the MCP defaults: a tool that
 * says nothing is assumed to). A tool offered in place of another must not rank above it: an agent
 * that meant to read is never pointed at a tool that writes.
 */
export type ToolRisk = 0 | 1 | 2;

export function riskOf(definition: UpstreamTool | undefined): ToolRisk {
  const annotations = definition?.annotations as
    | { readOnlyHint?: unknown; destructiveHint?: unknown }
    | undefined;
  if (annotations?.readOnlyHint === true) return 0;
  return annotations?.destructiveHint === false ? 1 : 2;
}

export const isReadOnly = (definition: UpstreamTool | undefined): boolean => riskOf(definition) === 0;
