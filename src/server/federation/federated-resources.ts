import { ListResourcesResultSchema, ListResourceTemplatesResultSchema } from "@modelcontextprotocol/core";
import type {
  ReadResourceRequest,
  ReadResourceResult,
  Server,
  ServerContext,
} from "@modelcontextprotocol/server";
import { isInputRequiredResult, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { UNCACHED } from "../cache-hints.ts";
import { isRetry } from "../calls/input-rounds.ts";
import { traced } from "../observe/request-spans.ts";
import { listPage } from "./federated-lists.ts";
import type { FederationContext } from "./federation-context.ts";

/** What a 2025 server answers for a resource it does not have. */
const RESOURCE_NOT_FOUND_2025 = -32002;

/**
 * The upstreams' resources served to one client session: resources/list and templates/list under
 * federated URIs and names, resources/read forwarded to the owner (the proxy's own kept results
 * first), and a legacy session's subscriptions (a 2026-07-28 request has none: the revision
 * removed subscribe and unsubscribe).
 */
export function serveResources(server: Server, federation: FederationContext): void {
  const { deps, naming, session } = federation;
  server.setRequestHandler("resources/list", (request) =>
    listPage(
      federation,
      "resources",
      "resources/list",
      ListResourcesResultSchema,
      "resources",
      request.params?.cursor,
      (owner, r) => ({
        ...r,
        uri: naming.uri(owner, String(r.uri)),
        name: naming.name(owner, String(r.name)),
      }),
    ),
  );
  server.setRequestHandler("resources/templates/list", (request) =>
    listPage(
      federation,
      "resources",
      "resources/templates/list",
      ListResourceTemplatesResultSchema,
      "resourceTemplates",
      request.params?.cursor,
      (owner, t) => ({
        ...t,
        uriTemplate: naming.uri(owner, String(t.uriTemplate)),
        name: naming.name(owner, String(t.name)),
      }),
    ),
  );
  const readResource = async (request: ReadResourceRequest, ctx: ServerContext) => {
    const kept = await deps.results?.(request.params.uri, ctx);
    if (kept) return kept;
    const owner = federation.byUri(request.params.uri);
    federation.unheld(owner.server);
    const result = await federation
      .call<ReadResourceResult>(ctx, "resources/read", owner.server, owner.uri, {
        ...request.params,
        uri: owner.uri,
      })
      .catch((error: unknown) => {
        // 2026-07-28 says a missing resource is -32602 and forbids -32002, which 2025 servers send.
        if (deps.era === "modern" && (error as { code?: unknown })?.code === RESOURCE_NOT_FOUND_2025) {
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `Resource not found: ${request.params.uri}`,
            {
              uri: request.params.uri,
            },
          );
        }
        throw error;
      });
    if (isInputRequiredResult(result)) return result;
    const read = {
      ...result,
      contents: result.contents.map((content) => ({
        ...content,
        uri: naming.uri(owner.server, content.uri),
      })),
    };
    // The answer to an input round's retry depends on what this client answered: never cached.
    return isRetry(ctx) && deps.era === "modern"
      ? { ...read, ...UNCACHED }
      : federation.hinted(read, [result]);
  };
  server.setRequestHandler("resources/read", traced(deps.traces, "resources/read", readResource));

  if (!session) return;
  // The owning server is subscribed once for every session and listen stream that wants the URI.
  server.setRequestHandler("resources/subscribe", async (request) => {
    federation.unheld(federation.byUri(request.params.uri).server);
    await deps.sessions.subscriptions.add(session.id, request.params.uri);
    session.subscriptions.add(request.params.uri);
    return {};
  });
  server.setRequestHandler("resources/unsubscribe", async (request) => {
    federation.byUri(request.params.uri);
    session.subscriptions.delete(request.params.uri);
    await deps.sessions.subscriptions.remove(session.id, request.params.uri);
    return {};
  });
}
