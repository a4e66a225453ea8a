import type { Logger } from "../log.ts";
import type { ToolsChangedEvent } from "../plugin-api.ts";
import type { UpstreamTool } from "../upstream-tool.ts";
import { createToolPool, type PoolChange } from "./tool-pool.ts";

/**
 * Dynamic routing for one client session: the tools a search finds are registered as real tools
 * of this session, its `tools/list` shows them, and the client is told with
 * `notifications/tools/list_changed`.
 *  - `dynamic`: from the start.
 *  - `auto`: the session starts as call-tool. After its first registration the client is notified;
 *    a client that re-fetches tools/list after that is switched to dynamic, one that has not by the
 *    next change stays on call_tool and is sent nothing more. Decided by what the client does.
 * A notification goes out when the registered set changed and the client has re-listed since the
 * last one: changes that pile up before it re-lists are covered by the one it has not acted on yet.
 */
export type RoutingMode = "call-tool" | "dynamic" | "auto" | "all";
type SessionState = "dynamic" | "undecided" | "call-tool";

/**
 * What a 2026-07-28 client is told when serve routes `dynamic` or `auto`: that revision has no
 * session to register tools in and forbids a tools/list that follows earlier requests, so the
 * tools a search finds stay out of its list. Said once, in its first retrieve_tools answer, so the
 * agent does not wait for a list change that never comes.
 */
export function sessionlessNote(mode: "dynamic" | "auto"): string {
  return (
    `This client speaks MCP 2026-07-28, which has no sessions, so ${mode} routing does not apply to it: ` +
    "the tools found are not added to your tool list. Call them with call_tool (name and arguments)."
  );
}

interface RegisteredTool {
  name: string;
  score: number;
  hash: string;
  definition: UpstreamTool;
}

export interface SessionRoutingOptions {
  id: string;
  mode: "dynamic" | "auto";
  limit: number;
  logger: Logger;
  /** Sends notifications/tools/list_changed outside any request (upstream changes). */
  notify: () => Promise<void>;
  /** The registered set changed (for plugins). */
  onChanged: (event: ToolsChangedEvent) => void;
  now?: () => number;
}

export interface SessionRouting {
  readonly id: string;
  state(): SessionState;
  /** tools/list: the registered tools this session shows (a re-list may decide an `auto` session). */
  listed(): UpstreamTool[];
  /** A search's hits: registers them; resolves to the names now registered. */
  register(tools: readonly RegisteredTool[], notify: () => Promise<void>): Promise<string[]>;
  has(name: string): boolean;
  /** A call to a registered tool refreshes it. */
  touch(name: string): void;
  /** The catalog changed: registered tools that went away are dropped, changed ones updated. */
  revalidate(lookup: (name: string) => { hash: string; definition: UpstreamTool } | undefined): Promise<void>;
}

export function createSessionRouting(options: SessionRoutingOptions): SessionRouting {
  const pool = createToolPool<UpstreamTool>(options.limit, options.now);
  let state: SessionState = options.mode === "dynamic" ? "dynamic" : "undecided";
  // A notification went out and the client has not re-listed since.
  let isAwaitingRelist = false;
  const log = options.logger.child(`session:${options.id}`);

  const announce = async (notify: () => Promise<void>) => {
    if (isAwaitingRelist) return;
    isAwaitingRelist = true;
    await notify().catch((error: unknown) => log.debug(`list_changed not sent: ${String(error)}`));
  };

  return {
    id: options.id,
    state: () => state,

    listed() {
      if (isAwaitingRelist) {
        isAwaitingRelist = false;
        if (state === "undecided") {
          state = "dynamic";
          log.info("the client re-listed its tools after list_changed: dynamic routing for this session");
        }
      }
      return state === "dynamic" ? pool.list().map((tool) => tool.definition) : [];
    },

    async register(tools, notify) {
      if (state === "call-tool") return [];
      const change: PoolChange = pool.offer(tools);
      if (change.added.length > 0 || change.removed.length > 0) {
        if (state === "undecided" && isAwaitingRelist) {
          state = "call-tool";
          log.info("the client did not re-list its tools after list_changed: it stays on call_tool");
          return [];
        }
        await announce(notify);
        options.onChanged({ reason: "retrieved", session: options.id, ...change });
      }
      return tools.map((tool) => tool.name).filter((name) => pool.has(name));
    },

    has: (name) => pool.has(name),
    touch: (name) => pool.touch(name),

    async revalidate(lookup) {
      const removed: string[] = [];
      const updated: string[] = [];
      for (const tool of pool.list()) {
        const current = lookup(tool.name);
        if (!current) removed.push(tool.name);
        else if (current.hash !== tool.hash) {
          pool.update(tool.name, current.hash, current.definition);
          updated.push(tool.name);
        }
      }
      pool.remove(removed);
      if (removed.length === 0 && updated.length === 0) return;
      if (state === "dynamic") await announce(options.notify);
      options.onChanged({ reason: "upstream", session: options.id, added: [], removed, updated });
    },
  };
}
