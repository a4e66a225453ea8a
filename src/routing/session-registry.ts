import type { Tool } from "@modelcontextprotocol/server";
import { createSessionRouting, type SessionRouting, type SessionRoutingOptions } from "./session-routing.ts";

/**
 * Every open session with dynamic routing, so that a change in the catalog (an upstream changed or
 * dropped tools) reaches the sessions that registered them. A session leaves when it closes,
 * which frees its registered tools.
 */
export interface SessionRegistry {
  open(options: SessionRoutingOptions): SessionRouting & { close(): void };
  revalidateAll(lookup: (name: string) => { hash: string; definition: Tool } | undefined): Promise<void>;
  count(): number;
}

export function createSessionRegistry(): SessionRegistry {
  const sessions = new Set<SessionRouting>();
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
  };
}
