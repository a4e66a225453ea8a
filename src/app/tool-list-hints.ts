import { createHash } from "node:crypto";
import { describeError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { canonicalJson } from "../security/canonical-json.ts";
import type { SharedStore } from "../store/shared-store.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";

/**
 * Replicas of a team deployment each hold their own connection to every server, and a server tells
 * only the session it answered that its tools changed (list_changed). So a replica that sees a
 * server's list change says so in the store, with a fingerprint of the list it saw; the others
 * list that server again over their own connection, unless they already hold that same list, and
 * each then reviews the change itself: a tool changed since it was approved is quarantined on
 * every replica, from what each one saw, not from what another one wrote.
 */
const TOOLS_CHANGED = "tools-changed";

export interface ToolListHints {
  /** A server's tool list as this replica just read it. */
  observe(server: string, tools: readonly object[]): void;
  stop(): void;
}

export function startToolListHints(store: SharedStore, pool: UpstreamPool, logger: Logger): ToolListHints {
  /** The fingerprint of each server's list as last seen here or announced by another replica. */
  const known = new Map<string, string>();
  const fingerprintOf = (tools: readonly object[]) =>
    createHash("sha256")
      .update(canonicalJson([...tools].sort((a, b) => nameOf(a).localeCompare(nameOf(b)))))
      .digest("base64url")
      .slice(0, 22);
  const stopListening = store.changes.on(TOOLS_CHANGED, (change) => {
    if (change.isOwn) return;
    const { server, fingerprint } = change.subject as { server?: unknown; fingerprint?: unknown };
    if (typeof server !== "string" || typeof fingerprint !== "string") return;
    if (known.get(server) === fingerprint) return;
    known.set(server, fingerprint);
    pool
      .live()
      .find((live) => live.server === server)
      ?.connection.relistTools();
  });
  return {
    observe(server, tools) {
      const fingerprint = fingerprintOf(tools);
      if (known.get(server) === fingerprint) return;
      known.set(server, fingerprint);
      store.announce(TOOLS_CHANGED, { server, fingerprint }).catch((error) => {
        logger.debug(
          `could not tell the other replicas that ${server}'s tools changed: ${describeError(error)}`,
        );
      });
    },
    stop: stopListening,
  };
}

function nameOf(tool: object): string {
  return String((tool as { name?: unknown }).name ?? "");
}
