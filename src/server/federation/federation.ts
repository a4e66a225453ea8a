import {
  CompleteResultSchema,
  ListPromptsResultSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
} from "@modelcontextprotocol/core";
import type {
  GetPromptRequest,
  GetPromptResult,
  InputRequiredResult,
  ReadResourceRequest,
  ReadResourceResult,
  Server,
  ServerCapabilities,
  ServerContext,
  StandardSchemaV1,
} from "@modelcontextprotocol/server";
import { isInputRequiredResult, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { describeError } from "../../errors.ts";
import type { CapabilityApprovals } from "../../index/capability-approvals.ts";
import type { Logger } from "../../log.ts";
import type { Tracer } from "../../tracing/tracer.ts";
import type { UpstreamPool } from "../../upstream/upstream-pool.ts";
import { type Audience, mergedHint, UNCACHED } from "../cache-hints.ts";
import { callOptionsFor } from "../calls/call-options.ts";
import { type InputRounds, isRetry, withInputRounds } from "../calls/input-rounds.ts";
import type { ClientEra } from "../client-era.ts";
import { forwardTraced, traced } from "../observe/request-spans.ts";
import type { ClientSession, ClientSessions } from "../transport/client-sessions.ts";
import { FEDERATED_NAMING, type Naming } from "./federated-names.ts";

/**
 * Resources, prompts, completion and logging of every upstream, served to one client session
 * (see federated-names.ts for how names and URIs are kept apart). Lists are paged one upstream
 * page at a time, over the connected servers that declare the feature, in name order; a server
 * that fails to list is left out of that page and logged, not allowed to fail the whole list.
 */
export const FEDERATED_CAPABILITIES: ServerCapabilities = {
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
};

export interface FederationDeps {
  pool: UpstreamPool;
  sessions: ClientSessions;
  logger: Logger;
  /** Every configured server name (to tell `server__name` apart). */
  serverNames(): readonly string[];
  /** Pinning of prompts and templates, and servers held whole (index/capability-approvals.ts). */
  capabilities?: CapabilityApprovals | undefined;
  /** A modern client's lists and reads carry cache hints (cache-hints.ts); a legacy one's do not. */
  era?: ClientEra | undefined;
  /** Who the endpoint answers (cache-hints.ts): its modern answers are public only for `everyone`. */
  audience: Audience;
  /** How names and URIs are shown to the client (default: federated, `server__name`, `mcpproxy://server/uri`). */
  naming?: Naming | undefined;
  /**
   * Awaited before a list: in passthrough the lists are the one server's, so they wait for it to
   * connect rather than answer empty while it starts.
   */
  ready?: (() => Promise<unknown>) | undefined;
  /** Input rounds of prompts/get and resources/read (input-rounds.ts); unset, forwarded as they are. */
  inputRounds?: InputRounds | undefined;
  /** Spans of prompts/get and resources/read (request-spans.ts); unset, none. */
  traces?: Tracer | undefined;
  /** The proxy's own kept results (read-result-tool.ts): a read of one, or undefined for another URI. */
  results?: ((uri: string, ctx: ServerContext) => Promise<ReadResourceResult | undefined>) | undefined;
}

type Feature = "resources" | "prompts";

/** What a 2025 server answers for a resource it does not have. */
const RESOURCE_NOT_FOUND_2025 = -32002;

/** Where each server's listing goes on: its own cursor, for the servers that have more. */
type Cursor = Record<string, string>;

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify(cursor)).toString("base64url");

function decodeCursor(text: string | undefined): Cursor | undefined {
  if (text === undefined) return undefined;
  try {
    const cursor = JSON.parse(Buffer.from(text, "base64url").toString()) as unknown;
    if (cursor && typeof cursor === "object" && Object.values(cursor).every((c) => typeof c === "string"))
      return cursor as Cursor;
  } catch {}
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    "unknown cursor: pass the nextCursor of the previous page",
  );
}

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
  const { pool, capabilities } = deps;
  const naming = deps.naming ?? FEDERATED_NAMING;
  /** A modern answer's cache fields, from the upstream results it was made of. */
  const hinted = <T extends object>(answer: T, from: readonly unknown[]) =>
    deps.era === "modern" ? { ...answer, ...mergedHint(from, deps.audience) } : answer;
  /** A server held whole offers nothing: its reads, prompts and completions are refused. */
  const unheld = (owner: string) => {
    const hold = capabilities?.serverHold(owner);
    if (hold) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, hold);
    return owner;
  };
  /** Only what was approved of a server's prompts and templates is listed (the rest is held). */
  const pinned = (owner: string, key: string, items: Record<string, unknown>[]) => {
    const kind = key === "prompts" ? "prompt" : key === "resourceTemplates" ? "template" : undefined;
    return capabilities && kind ? capabilities.review(owner, kind, items as { name: string }[]) : items;
  };

  /**
   * One page of a federated list: the next page of every server that has one (on the first page,
   * every connected server that declares the feature), its items renamed. A client that never
   * pages still sees every server; one whose servers page gets a cursor that goes on with them.
   */
  async function page<T extends StandardSchemaV1, K extends string>(
    feature: Feature,
    method: string,
    schema: T,
    key: K,
    cursorText: string | undefined,
    rename: (server: string, item: Record<string, unknown>) => Record<string, unknown>,
    // The items are relayed as their servers sent them (renamed), not re-typed: `never[]` lets the
    // page stand for any list result.
  ): Promise<Record<K, never[]> & { nextCursor?: string }> {
    const from = decodeCursor(cursorText);
    await deps.ready?.();
    const servers = from
      ? Object.keys(from)
      : pool
          .live()
          .filter(({ connection }) => connection.client.getServerCapabilities()?.[feature])
          .map(({ server }) => server)
          .filter((owner) => !capabilities?.serverHold(owner))
          .sort();
    const next: Cursor = {};
    const answered: unknown[] = [];
    const pages = await Promise.all(
      servers.map(async (owner) => {
        try {
          const cursor = from?.[owner];
          const result = (await pool.request(
            owner,
            { method, params: cursor ? { cursor } : {} },
            schema,
          )) as Record<string, unknown>;
          if (capabilities?.serverHold(owner)) return [];
          answered.push(result);
          if (typeof result.nextCursor === "string" && result.nextCursor) next[owner] = result.nextCursor;
          const items = ((result[key] as Record<string, unknown>[] | undefined) ?? []).filter(
            (item) => item && typeof item === "object" && typeof item.name === "string",
          );
          return pinned(owner, key, items).map((item) => rename(owner, item));
        } catch (error) {
          deps.logger.child(owner).warn(`${method} failed: ${describeError(error)}`);
          return [];
        }
      }),
    );
    return hinted(
      {
        [key]: pages.flat(),
        ...(Object.keys(next).length > 0 ? { nextCursor: encodeCursor(next) } : {}),
      },
      answered,
    ) as Record<K, never[]> & { nextCursor?: string };
  }

  const byUri = (uri: string) => {
    const owner = naming.fromUri(uri);
    if (!owner) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `unknown resource ${uri}: this proxy's resource URIs are mcpproxy://<server>/<uri>, as resources/list gives them`,
      );
    }
    if (!deps.serverNames().includes(owner.server)) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `unknown resource ${uri}: no server named ${owner.server} is configured`,
        { uri },
      );
    }
    return owner;
  };
  const byName = (name: string, what: string) => {
    const owner = naming.fromName(name, deps.serverNames());
    if (!owner) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `unknown ${what} ${name}: its name starts with <server>__`,
      );
    }
    return owner;
  };
  /** A prompt that is new or changed since approved is refused like one of a held server. */
  const heldPrompt = (owner: { server: string; name: string }) => {
    unheld(owner.server);
    if (capabilities?.isHeld(owner.server, "prompt", owner.name)) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `the prompt ${owner.name} of ${owner.server} is new or changed since it was approved, and is held until ` +
          `the user runs \`mcpproxy approve ${owner.server}\``,
      );
    }
    return owner;
  };
  const forward = <T extends StandardSchemaV1>(
    owner: string,
    method: string,
    params: Record<string, unknown>,
    schema: T,
  ): Promise<StandardSchemaV1.InferOutput<T>> => pool.request(owner, { method, params }, schema);
  /**
   * prompts/get and resources/read, forwarded as calls are: what the server asks the client during
   * them reaches only this client (its session, or an input round), with their input rounds.
   */
  const call = async <R extends GetPromptResult | ReadResourceResult>(
    ctx: ServerContext,
    method: "prompts/get" | "resources/read",
    owner: string,
    target: string,
    params: Record<string, unknown>,
  ): Promise<R | InputRequiredResult> => {
    const clients = session ? { session, sessions: deps.sessions } : undefined;
    const options = callOptionsFor(undefined, ctx, clients);
    const { _meta: _, ...args } = params;
    const run = (hooks: object) =>
      forwardTraced(
        deps.traces,
        { ...options, ...hooks },
        { method, server: owner, target: method === "prompts/get" ? target : undefined },
        (sent) => pool.forward(owner, method, params, sent) as Promise<R | InputRequiredResult>,
      );
    try {
      return await (deps.inputRounds
        ? withInputRounds(
            deps.inputRounds,
            deps.era ?? "legacy",
            ctx,
            { method, server: owner, target, args },
            run,
          )
        : run({}));
    } finally {
      await options.flushed({});
    }
  };

  server.setRequestHandler("resources/list", (request) =>
    page(
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
    page(
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
    const owner = byUri(request.params.uri);
    unheld(owner.server);
    const result = await call<ReadResourceResult>(ctx, "resources/read", owner.server, owner.uri, {
      ...request.params,
      uri: owner.uri,
    }).catch((error: unknown) => {
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
    return isRetry(ctx) && deps.era === "modern" ? { ...read, ...UNCACHED } : hinted(read, [result]);
  };
  server.setRequestHandler("resources/read", traced(deps.traces, "resources/read", readResource));
  server.setRequestHandler("prompts/list", (request) =>
    page(
      "prompts",
      "prompts/list",
      ListPromptsResultSchema,
      "prompts",
      request.params?.cursor,
      (owner, p) => ({
        ...p,
        name: naming.name(owner, String(p.name)),
      }),
    ),
  );
  const getPrompt = async (request: GetPromptRequest, ctx: ServerContext) => {
    const owner = heldPrompt(byName(request.params.name, "prompt"));
    const result = await call<GetPromptResult>(ctx, "prompts/get", owner.server, owner.name, {
      ...request.params,
      name: owner.name,
    });
    if (isInputRequiredResult(result)) return result;
    return {
      ...result,
      messages: result.messages.map((message) => ({
        ...message,
        content: federatedContent(
          naming,
          owner.server,
          message.content as unknown as Record<string, unknown>,
        ),
      })),
    } as typeof result;
  };
  server.setRequestHandler("prompts/get", traced(deps.traces, "prompts/get", getPrompt));

  server.setRequestHandler("completion/complete", async (request) => {
    const { ref } = request.params;
    if (ref.type === "ref/prompt") {
      const owner = heldPrompt(byName(ref.name, "prompt"));
      return forward(
        owner.server,
        "completion/complete",
        { ...request.params, ref: { ...ref, name: owner.name } },
        CompleteResultSchema,
      );
    }
    const owner = byUri(ref.uri);
    unheld(owner.server);
    return forward(
      owner.server,
      "completion/complete",
      { ...request.params, ref: { ...ref, uri: owner.uri } },
      CompleteResultSchema,
    );
  });

  // What only a legacy session has: resource subscriptions, its log level, and roots changes.
  if (!session) return;
  // The owning server is subscribed once for every session and listen stream that wants the URI.
  server.setRequestHandler("resources/subscribe", async (request) => {
    unheld(byUri(request.params.uri).server);
    await deps.sessions.subscriptions.add(session.id, request.params.uri);
    session.subscriptions.add(request.params.uri);
    return {};
  });
  server.setRequestHandler("resources/unsubscribe", async (request) => {
    byUri(request.params.uri);
    session.subscriptions.delete(request.params.uri);
    await deps.sessions.subscriptions.remove(session.id, request.params.uri);
    return {};
  });

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

/** A prompt message's content with the URIs of the resources it embeds or links made federated. */
function federatedContent(
  naming: Naming,
  server: string,
  content: Record<string, unknown>,
): Record<string, unknown> {
  if (content.type === "resource_link" && typeof content.uri === "string") {
    return { ...content, uri: naming.uri(server, content.uri) };
  }
  const resource = content.resource as Record<string, unknown> | undefined;
  if (content.type === "resource" && resource && typeof resource.uri === "string") {
    return { ...content, resource: { ...resource, uri: naming.uri(server, resource.uri) } };
  }
  return content;
}
