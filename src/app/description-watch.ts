import type { ServerConfig } from "../config/parse-server.ts";
import { describeError } from "../errors.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { Logger } from "../log.ts";
import { serverMentions } from "../security/poisoning-scan.ts";
import type { ChangeNotifier } from "../server/federation/change-feed.ts";
import {
  describeServers,
  type SearchableServers,
  type ServerSketch,
  serverLine,
} from "../server/tools/search-description.ts";

/**
 * Keeps retrieve_tools' description (server/tools/search-description.ts) in step with the catalog:
 * servers added or removed, tools indexed, approved or quarantined, instructions changed. Like
 * list-watch.ts it looks every `intervalMs` (approvals are written by another process, `mcpproxy
 * approve`), first at a cheap stamp (which approved tools with which hashes, which instructions),
 * and builds the text again only when that moved and then held still for one look: an indexing
 * storm becomes one change. Clients hear of it (`toolsChanged`: list_changed to 2025 sessions, the
 * tools event on 2026 listen streams) only when the text itself differs from the one they were
 * given, so two identical states never cost a notification.
 */
export interface DescriptionWatchOptions {
  catalog: Pick<
    ToolCatalog,
    "names" | "get" | "definitionOf" | "shownHash" | "isQuarantined" | "instructions" | "capabilities"
  >;
  /** The servers as configured now. */
  servers: () => readonly ServerConfig[];
  changes: Pick<ChangeNotifier, "toolsChanged">;
  logger: Logger;
  /** Whether servers are still starting (their tools, and so the text, about to change). */
  isStarting?: (() => boolean) | undefined;
  intervalMs?: number | undefined;
}

export interface DescriptionWatch extends SearchableServers {
  stop(): void;
}

type WatchedCatalog = DescriptionWatchOptions["catalog"];

const DESCRIPTION_WATCH_MS = 1_000;
/** How many looks a change may keep moving before the text follows it anyway. */
const MAX_LOOKS_UNSETTLED = 10;

/** The servers that count: enabled, not waiting for a person, not held whole. */
function countedServers(options: DescriptionWatchOptions): ServerConfig[] {
  return options
    .servers()
    .filter(
      (server) =>
        server.enabled && !server.awaitingApproval && !options.catalog.capabilities?.serverHold(server.name),
    );
}

/** What decides the text, cheaply: each counted server's approved tools (by hash) and its instructions. */
export function descriptionStamp(options: DescriptionWatchOptions): string {
  const { catalog } = options;
  return JSON.stringify(
    countedServers(options)
      .map((server) => [
        server.name,
        catalog.instructions?.get(server.name) ?? "",
        catalog
          .names(server.name)
          .flatMap((name) => {
            const tool = catalog.get(name);
            return tool && !catalog.isQuarantined(tool) ? [`${name}:${catalog.shownHash(tool)}`] : [];
          })
          .sort(),
      ])
      .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0)),
  );
}

/** The sketches the text is made from: approved tools only, as agents are shown them. */
export function serverSketches(options: DescriptionWatchOptions): ServerSketch[] {
  const { catalog } = options;
  return countedServers(options).map((server) => ({
    name: server.name,
    instructions: catalog.instructions?.get(server.name),
    tools: catalog
      .names(server.name)
      .sort()
      .flatMap((name) => {
        const tool = catalog.get(name);
        const definition = tool && !catalog.isQuarantined(tool) ? catalog.definitionOf(tool) : undefined;
        return definition ? [{ name: definition.name, description: definition.description }] : [];
      }),
  }));
}

/** Builds the text; each server's line is kept while its sketch is the same (the scan is not free). */
export function createDescriptionBuilder(): (sketches: readonly ServerSketch[]) => string {
  let lines = new Map<string, string>();
  return (sketches) => {
    const mentions = serverMentions(sketches.map((sketch) => sketch.name));
    const next = new Map<string, string>();
    const text = describeServers(sketches, (sketch) => {
      const key = JSON.stringify(sketch);
      const line = lines.get(key) ?? next.get(key) ?? serverLine(sketch, mentions);
      next.set(key, line);
      return line;
    });
    lines = next;
    return text;
  };
}

export function startDescriptionWatch(options: DescriptionWatchOptions): DescriptionWatch {
  const build = createDescriptionBuilder();
  let stamp = descriptionStamp(options);
  let text = build(serverSketches(options));
  /** A stamp seen at the last look that differs from the one the text was built from, and for how many looks. */
  let moving: string | undefined;
  let looks = 0;
  const timer = setInterval(() => {
    try {
      const now = descriptionStamp(options);
      if (now === stamp) {
        moving = undefined;
        return;
      }
      // Still changing since the last look: wait for it to settle, but not for ever (a server that
      // changes its tools every second would otherwise never be described).
      if (now !== moving && looks < MAX_LOOKS_UNSETTLED) {
        if (moving === undefined) looks = 0;
        looks++;
        moving = now;
        return;
      }
      moving = undefined;
      looks = 0;
      stamp = now;
      const next = build(serverSketches(options));
      if (next === text) return;
      text = next;
      options.logger.debug("retrieve_tools' description changed; telling clients");
      options.changes.toolsChanged();
    } catch (error) {
      options.logger.debug(`description watch: ${describeError(error)}`);
    }
  }, options.intervalMs ?? DESCRIPTION_WATCH_MS);
  timer.unref?.();
  /**
   * A profile's view of the catalog (src/profiles/) gets its own text, made when asked and again
   * only when its stamp moved; its clients are told of changes with everyone else's.
   */
  const views = new WeakMap<
    object,
    { stamp: string; text: string; build: ReturnType<typeof createDescriptionBuilder> }
  >();
  const textOf = (view: WatchedCatalog) => {
    const scoped = { ...options, catalog: view };
    const now = descriptionStamp(scoped);
    let seen = views.get(view);
    if (!seen) {
      seen = { stamp: "", text: "", build: createDescriptionBuilder() };
      views.set(view, seen);
    }
    if (seen.stamp !== now || seen.text === "") {
      seen.stamp = now;
      seen.text = seen.build(serverSketches(scoped));
    }
    return seen.text;
  };
  return {
    current: (view) => (view === options.catalog ? text : textOf(view as WatchedCatalog)),
    // The stamp is looked at now too: a change made since the last look is not settled.
    isSettled: () => moving === undefined && !options.isStarting?.() && descriptionStamp(options) === stamp,
    stop: () => clearInterval(timer),
  };
}
