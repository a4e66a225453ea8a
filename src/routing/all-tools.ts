import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { CallStats } from "../stats/call-record.ts";
import type { UpstreamTool } from "../upstream-tool.ts";
import { ALWAYS_LOAD_META_KEY, alwaysLoaded, type UsageScore, usageScores } from "./always-load.ts";

/**
 * `--routing all`: every approved tool of a catalog view under its public name, as the view shows
 * it (a person's overrides applied, disabled and quarantined tools left out), in name order, the
 * most used marked `"anthropic/alwaysLoad": true` (always-load.ts).
 *
 * The list changes only when the catalog does (a server's tools, an approval, an override) or when
 * the marks are recomputed: at each such change, and every ALWAYS_LOAD_REFRESH_MS, never per
 * request. A client's whole tool list sits at the head of its prompt, and every change to it costs
 * the client its prompt cache; marks that moved with each call would cost it that all the time.
 * `check` is the one place that notices a change (the serve looks every second) and says whether
 * the clients must be told.
 */
const ALWAYS_LOAD_REFRESH_MS = 3_600_000;

interface ListedTool {
  tool: UpstreamTool;
  name: string;
  /** The size of its JSON, for the page bound (list-pages.ts). */
  bytes: number;
}

export interface AllTools {
  /** The list of this catalog view as of the last change `check` noticed (or now, the first time). */
  list(catalog: ToolCatalog): readonly ListedTool[];
  /**
   * Looks at `catalog` (the whole one) again: true when its list or its marks changed since the
   * last look, and the clients must be told. The first look only takes note.
   */
  check(catalog: ToolCatalog): boolean;
}

export interface AllToolsOptions {
  /** How many tools are marked (`mcpproxy.alwaysLoad`); 0, none. */
  alwaysLoad: number;
  /** Where the calls are counted; unset (statistics off), no tool is marked. */
  stats?: CallStats | undefined;
  now?: () => number;
}

interface Entry {
  key: string;
  name: string;
  hash: string;
}

export function createAllTools(options: AllToolsOptions): AllTools {
  const now = options.now ?? Date.now;
  let scores = new Map<string, UsageScore>();
  let scoredAt = Number.NEGATIVE_INFINITY;
  const rescore = () => {
    scores = options.stats ? usageScores(options.stats.all(), now()) : new Map();
    scoredAt = now();
  };
  rescore();
  /** What each tool is shown as, by catalog key, for the hash it had: the definitions are on disk. */
  const shown = new Map<string, { hash: string; tool: Omit<UpstreamTool, "name">; bytes: number }>();
  let generation = 0;
  let seen: { stamp: string; marks: string } | undefined;
  /** The catalog and its version at the last check that walked it. */
  let looked: { catalog: ToolCatalog; version: string } | undefined;
  const memo = new WeakMap<ToolCatalog, { generation: number; list: ListedTool[] }>();

  const entriesOf = (catalog: ToolCatalog): Entry[] =>
    catalog
      .names()
      .flatMap((name) => {
        const tool = catalog.get(name);
        return tool && !catalog.isQuarantined(tool)
          ? [{ key: tool.key, name, hash: catalog.shownHash(tool) }]
          : [];
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const shownOf = (catalog: ToolCatalog, entry: Entry) => {
    const cached = shown.get(entry.key);
    if (cached?.hash === entry.hash) return cached;
    const tool = catalog.get(entry.name);
    const definition = tool && catalog.definitionOf(tool);
    if (!definition) return undefined;
    const made = { hash: entry.hash, tool: listedFields(definition), bytes: 0 };
    made.bytes = JSON.stringify(made.tool).length + entry.name.length + 10;
    shown.set(entry.key, made);
    return made;
  };

  const build = (catalog: ToolCatalog): ListedTool[] => {
    const entries = entriesOf(catalog);
    const marked = alwaysLoaded(entries, scores, options.alwaysLoad);
    return entries.flatMap((entry) => {
      const made = shownOf(catalog, entry);
      if (!made) return [];
      const meta = marked.has(entry.name)
        ? { ...(made.tool._meta as Record<string, unknown> | undefined), [ALWAYS_LOAD_META_KEY]: true }
        : made.tool._meta;
      const tool = { name: entry.name, ...made.tool, ...(meta ? { _meta: meta } : {}) } as UpstreamTool;
      return [{ tool, name: entry.name, bytes: made.bytes + (marked.has(entry.name) ? 30 : 0) }];
    });
  };

  return {
    list(catalog) {
      const kept = memo.get(catalog);
      if (kept?.generation === generation) return kept.list;
      const list = build(catalog);
      memo.set(catalog, { generation, list });
      return list;
    },
    check(catalog) {
      // Nothing in the catalog moved and the marks are not due: the list is what it was, without
      // walking every tool (a look every second, at any number of tools).
      const version = catalog.version();
      if (
        looked?.catalog === catalog &&
        looked.version === version &&
        now() - scoredAt < ALWAYS_LOAD_REFRESH_MS
      )
        return false;
      looked = { catalog, version };
      const entries = entriesOf(catalog);
      const stamp = String(Bun.hash(entries.map((e) => `${e.name}\u0000${e.hash}`).join("\u0001")));
      const isListChanged = seen !== undefined && stamp !== seen.stamp;
      // Marks move with the list (the clients re-read it then anyway), or on the slow schedule.
      if (isListChanged || now() - scoredAt >= ALWAYS_LOAD_REFRESH_MS) rescore();
      const marks = [...alwaysLoaded(entries, scores, options.alwaysLoad)].join("\u0000");
      const isChanged = seen !== undefined && (isListChanged || marks !== seen.marks);
      if (isListChanged) {
        const keys = new Set(entries.map((entry) => entry.key));
        for (const key of shown.keys()) if (!keys.has(key)) shown.delete(key);
      }
      seen = { stamp, marks };
      if (isChanged) generation++;
      return isChanged;
    },
  };
}

/**
 * What the list shows of a definition: what a client needs to choose and call the tool, and no
 * more. Fields the proxy cannot honour (`execution`: task-augmented calls) are left out, and the
 * upstream's own `anthropic/alwaysLoad` too: which tools take a place in every context is the
 * proxy's call, from its statistics, not a server's claim about itself.
 */
function listedFields(definition: UpstreamTool): Omit<UpstreamTool, "name"> {
  const { title, description, inputSchema, outputSchema, annotations, icons, _meta } = definition;
  const meta = isObject(_meta) ? { ..._meta } : undefined;
  if (meta) delete meta[ALWAYS_LOAD_META_KEY];
  const validIcons = Array.isArray(icons)
    ? icons.filter((icon) => isObject(icon) && typeof icon.src === "string")
    : [];
  return {
    ...(typeof title === "string" ? { title } : {}),
    ...(typeof description === "string" ? { description } : {}),
    inputSchema: (isObject(inputSchema) ? inputSchema : { type: "object" }) as UpstreamTool["inputSchema"],
    ...(isObject(outputSchema) ? { outputSchema: outputSchema as UpstreamTool["outputSchema"] } : {}),
    ...(isObject(annotations) ? { annotations } : {}),
    ...(validIcons.length > 0 ? { icons: validIcons as UpstreamTool["icons"] } : {}),
    ...(meta && Object.keys(meta).length > 0 ? { _meta: meta } : {}),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
