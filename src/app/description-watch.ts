import type { ServerConfig } from "../config/parse-server.ts";
import { describeError } from "../errors.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { Logger } from "../log.ts";
import type { ChangeNotifier } from "../server/federation/change-feed.ts";
import type { SearchableServers } from "../server/tools/search-description.ts";
import {
  createDescriptionBuilder,
  type DescribedServer,
  type DescribedSource,
  describedServers,
  stampOf,
} from "./description-sketches.ts";

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
export interface DescriptionWatchOptions extends DescribedSource {
  catalog: DescribedSource["catalog"] & Pick<ToolCatalog, "version">;
  changes: Pick<ChangeNotifier, "toolsChanged">;
  logger: Logger;
  /** Whether servers are still starting (their tools, and so the text, about to change). */
  isStarting?: (() => boolean) | undefined;
  intervalMs?: number | undefined;
}

export interface DescriptionWatch extends SearchableServers {
  stop(): void;
}

const DESCRIPTION_WATCH_MS = 1_000;
/** How many looks a change may keep moving before the text follows it anyway. */
const MAX_LOOKS_UNSETTLED = 10;

/** A look at what decides the text: its stamp, and the servers it was worked out from. */
interface Look {
  stamp: string;
  servers: readonly DescribedServer[];
}

/**
 * What decides the text as of now, worked out again only when something it reads may have moved:
 * the server list (a new one on every change, as approval-policy.ts relies on too), the catalog's
 * version, the held servers' approvals. Walking every server's tools each second cost an idle
 * serve with thousands of servers most of its time (and a search at 100,000 tools its latency).
 */
export function createLook(options: DescriptionWatchOptions): () => Look {
  let seenServers: readonly ServerConfig[] | undefined;
  let seenVersion: string | undefined;
  let last: Look | undefined;
  return () => {
    // Read before the walk: a change made while it runs moves them again for the next look.
    const servers = options.servers();
    const version = `${options.catalog.version()}|${options.catalog.capabilities?.version() ?? ""}`;
    if (!last || servers !== seenServers || version !== seenVersion) {
      const described = describedServers(options);
      last = { stamp: stampOf(described), servers: described };
      seenServers = servers;
      seenVersion = version;
    }
    return last;
  };
}

export function startDescriptionWatch(options: DescriptionWatchOptions): DescriptionWatch {
  const build = createDescriptionBuilder();
  const look = createLook(options);
  /**
   * The text and the stamp it was built from: made when first asked for, or at the first look once
   * the servers are no longer starting, not at start (start-up is on the path of every first
   * answer, and a client that only searches never asks for it). The first text is the one clients
   * are told of changes against.
   */
  let built: { stamp: string; text: string } | undefined;
  const ensureBuilt = () => {
    if (!built) {
      const first = look();
      built = { stamp: first.stamp, text: build(first.servers) };
    }
    return built;
  };
  /** A stamp seen at the last look that differs from the one the text was built from, and for how many looks. */
  let moving: string | undefined;
  let looks = 0;
  const timer = setInterval(() => {
    try {
      // Not built unasked while servers are still starting: at 100,000 tools the first text is a
      // third of a second of the one thread the clients' searches wait on, and it would be about to
      // change anyway. A client that lists the tools has it built then (current, isSettled).
      if (!built && options.isStarting?.()) return;
      if (!built) return void ensureBuilt();
      const seen = look();
      const now = seen.stamp;
      if (now === built.stamp) {
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
      const next = build(seen.servers);
      const previous = built.text;
      built = { stamp: now, text: next };
      if (next === previous) return;
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
  const textOf = (view: DescribedSource["catalog"]) => {
    const described = describedServers({ ...options, catalog: view });
    const now = stampOf(described);
    let seen = views.get(view);
    if (!seen) {
      seen = { stamp: "", text: "", build: createDescriptionBuilder() };
      views.set(view, seen);
    }
    if (seen.stamp !== now || seen.text === "") {
      seen.stamp = now;
      seen.text = seen.build(described);
    }
    return seen.text;
  };
  return {
    current: (view) =>
      view === options.catalog ? ensureBuilt().text : textOf(view as DescribedSource["catalog"]),
    // The stamp is looked at now too: a change made since the last look is not settled.
    isSettled: () => moving === undefined && !options.isStarting?.() && look().stamp === ensureBuilt().stamp,
    stop: () => clearInterval(timer),
  };
}
