import { CompleteResultSchema } from "@modelcontextprotocol/core";
import type { Server, ServerCapabilities } from "@modelcontextprotocol/server";
import { describeError } from "../../errors.ts";
import type { ClientSession } from "../transport/client-sessions.ts";
import { servePrompts } from "./federated-prompts.ts";
import { serveResources } from "./federated-resources.ts";
import { createFederationContext, type FederationDeps } from "./federation-context.ts";

/**
 * Resources, prompts, completion and logging of every upstream, served to one client session
 * (see federated-names.ts for how names and URIs are kept apart): resources by
 * federated-resources.ts and prompts by federated-prompts.ts, their lists paged over the servers by
 * federated-lists.ts; completion, a legacy session's log level and its roots changes here.
 */
export const FEDERATED_CAPABILITIES: ServerCapabilities = {
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
};

/**
 * `session` is the legacy client session (subscriptions and `logging/setLevel` live in it); a
 * 2026-07-28 request has none: it gets no subscribe, unsubscribe or setLevel (the revision removed
 * them), and its lists and reads carry cache hints (cache-hints.ts).
 */
export function serveFederation(
  server: Server,
  session: ClientSession | undefined,
  deps: FederationDeps,
): void {
  const { pool } = deps;
  const federation = createFederationContext(session, deps);
  serveResources(server, federation);
  servePrompts(server, federation);

  server.setRequestHandler("completion/complete", async (request) => {
    const { ref } = request.params;
    if (ref.type === "ref/prompt") {
      const owner = federation.heldPrompt(federation.byName(ref.name, "prompt"));
      return federation.forward(
        owner.server,
        "completion/complete",
        { ...request.params, ref: { ...ref, name: owner.name } },
        CompleteResultSchema,
      );
    }
    const owner = federation.byUri(ref.uri);
    federation.unheld(owner.server);
    return federation.forward(
      owner.server,
      "completion/complete",
      { ...request.params, ref: { ...ref, uri: owner.uri } },
      CompleteResultSchema,
    );
  });

  // What only a legacy session has: resource subscriptions (federated-resources.ts), its log level,
  // and roots changes.
  if (!session) return;
  server.setRequestHandler("logging/setLevel", async (request) => {
    session.level = request.params.level;
    const level = deps.sessions.mostVerboseLevel() ?? request.params.level;
    await Promise.all(
      pool
        .live()
        // A 2026-07-28 server has no logging/setLevel: its level comes with each request.
        .filter(
          ({ connection }) =>
            connection.era === "legacy" && connection.client.getServerCapabilities()?.logging,
        )
        .map(({ server: owner, connection }) =>
          connection.client
            .setLoggingLevel(level)
            .catch((error: unknown) =>
              deps.logger.child(owner).debug(`logging/setLevel failed: ${describeError(error)}`),
            ),
        ),
    );
    return {};
  });

  // The client's roots changed: every server may be using them (they reach servers through the proxy).
  server.setNotificationHandler("notifications/roots/list_changed", async () => {
    // A 2026-07-28 server asks for roots with each request that needs them: nothing to tell it.
    for (const { connection } of pool.live())
      if (connection.era === "legacy") await connection.client.sendRootsListChanged().catch(() => undefined);
  });
}
