import type { Logger } from "../log.ts";
import type { UpstreamTool } from "../upstream-tool.ts";
import { createSessionRouting, type SessionRouting, type SessionRoutingOptions } from "./session-routing.ts";

/**
 * Every open session with dynamic routing, so that a change in the catalog (an upstream changed or
 * dropped tools) reaches the sessions that registered them. A session leaves when it closes,
 * which frees its registered tools.
 */
export interface SessionRegistry {
  open(options: SessionRoutingOptions): SessionRouting & { close(): void };
  revalidateAll(
    lookup: (name: string) => { hash: string; definition: UpstreamTool } | undefined,
  ): Promise<void>;
  count(): number;
  /**
   * A 2026-07-28 client searched while serve routes `mode`: it has no session, so the operator is
   * told, once per serve, that such clients call tools through call_tool.
   */
  sessionless(mode: "dynamic" | "auto"): void;
}

export function createSessionRegistry(logger: Logger): SessionRegistry {
  const sessions = new Set<SessionRouting>();
  let isSessionlessLogged = false;
  return {
    open(options) {
      const routing = createSessionRouting(options);
      sessions.add(routing);
      return { ...routing, close: () => void sessions.delete(routing) };
    },
    async revalidateAll(lookup) {
      await Promise.all([...sessions].map((session) => session.revalidate(lookup)));
    },
    count: () => sessions.size,
    sessionless(mode) {
      if (isSessionlessLogged) return;
      isSessionlessLogged = true;
      logger.info(
        `a client speaking MCP 2026-07-28 is served: --routing ${mode} needs a session, which that revision ` +
          "has not, so its tools are called through call_tool (told in its first retrieve_tools answer); " +
          "--routing all lists every approved tool to both revisions",
      );
    },
  };
}
