import type { UpstreamTool } from "../upstream-tool.ts";
import { hashTool, type ToolFields, toolFields } from "./tool-document.ts";
import { toolKey } from "./tool-naming.ts";
import {
  changedOverrides,
  isDisabled,
  overrideOf,
  overridesFingerprint,
  shownDefinition,
  type ToolOverrides,
  unlistedOverrides,
} from "./tool-overrides.ts";

interface Ref {
  server: string;
  tool: string;
}

/**
 * The catalog's one seam for a person's tool overrides: every public view of a tool (search
 * document, name, definition, vector) asks here, and the stored definitions stay the upstream's.
 */
export interface OverrideView {
  isHidden(ref: Ref): boolean;
  /** Whether the tool is shown otherwise than its server lists it (name, description, annotations). */
  reshapes(ref: Ref): boolean;
  shown(ref: Ref, definition: UpstreamTool): UpstreamTool;
  /** The person's name for the tool part of its public name, if any. */
  nameOf(ref: Ref): string | undefined;
  /** `base` as it is without overrides, else marked with their fingerprint. */
  stamp<T extends number | string>(base: T): T | string;
  /** Takes the new overrides; returns the tools whose override changed. */
  replace(next: ToolOverrides): Ref[];
  /** The search documents of these tools as shown; a hidden tool has none. */
  documents(list: readonly (Ref & { definition: UpstreamTool })[]): { id: string; fields: ToolFields }[];
  /** These tools as they are embedded: the definition shown, with its own hash when it is not the server's. */
  embeddable<T extends Ref & { hash: string; definition: UpstreamTool }>(list: readonly T[]): T[];
  /** The overridden tools this list lacks. */
  unlisted(server: string, listed: readonly { name: string }[]): string[];
}

export function createOverrideView(initial: ToolOverrides): OverrideView {
  let overrides = initial;
  let fingerprint = overridesFingerprint(overrides);
  const of = (ref: Ref) => overrideOf(overrides, ref.server, ref.tool);
  const view: OverrideView = {
    isHidden: (ref) => isDisabled(of(ref)),
    reshapes(ref) {
      const override = of(ref);
      return (
        override !== undefined &&
        (override.name !== undefined ||
          override.description !== undefined ||
          override.annotations !== undefined)
      );
    },
    shown: (ref, definition) => shownDefinition(definition, of(ref)),
    nameOf: (ref) => of(ref)?.name,
    stamp: (base) => (fingerprint ? `${base}:${fingerprint}` : base),
    replace(next) {
      const changed = changedOverrides(overrides, next);
      overrides = next;
      fingerprint = overridesFingerprint(next);
      return changed;
    },
    documents: (list) =>
      list
        .filter((tool) => !view.isHidden(tool))
        .map((tool) => ({
          id: toolKey(tool),
          fields: toolFields(tool.server, view.shown(tool, tool.definition)),
        })),
    embeddable: (list) =>
      list.map((tool) => {
        const definition = view.shown(tool, tool.definition);
        return definition === tool.definition ? tool : { ...tool, definition, hash: hashTool(definition) };
      }),
    unlisted: (server, listed) => unlistedOverrides(overrides, server, listed),
  };
  return view;
}
