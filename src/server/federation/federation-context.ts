import type {
  GetPromptResult,
  InputRequiredResult,
  ReadResourceResult,
  ServerContext,
  StandardSchemaV1,
} from "@modelcontextprotocol/server";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { CapabilityApprovals } from "../../index/capability-approvals.ts";
import type { Logger } from "../../log.ts";
import type { Tracer } from "../../tracing/tracer.ts";
import type { UpstreamPool } from "../../upstream/upstream-pool.ts";
import { type Audience, type CacheHint, mergedHint } from "../cache-hints.ts";
import { callOptionsFor } from "../calls/call-options.ts";
import { type InputRounds, withInputRounds } from "../calls/input-rounds.ts";
import type { ClientEra } from "../client-era.ts";
import { forwardTraced } from "../observe/request-spans.ts";
import type { ClientSession, ClientSessions } from "../transport/client-sessions.ts";
import { FEDERATED_NAMING, type Naming } from "./federated-names.ts";

/**
 * What every federated handler of one client session goes through (federation.ts wires them): the
 * server that owns a name or URI and whether it is held, the request forwarded to it (prompts/get
 * and resources/read as calls are, with their input rounds and spans), and a modern answer's
 * cache hint from the upstream results it was made of.
 */
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

export interface FederationContext {
  deps: FederationDeps;
  /** The legacy client session (subscriptions and `logging/setLevel` live in it); none for a 2026-07-28 request. */
  session: ClientSession | undefined;
  naming: Naming;
  /** A modern answer's cache fields, from the upstream results it was made of. */
  hinted<T extends object>(answer: T, from: readonly unknown[]): T | (T & CacheHint);
  /** A server held whole offers nothing: its reads, prompts and completions are refused. */
  unheld(owner: string): string;
  /** The server and its own URI of a federated resource URI; refused when no configured server has it. */
  byUri(uri: string): { server: string; uri: string };
  /** The server and its own name of a federated prompt (or other) name. */
  byName(name: string, what: string): { server: string; name: string };
  /** A prompt that is new or changed since approved is refused like one of a held server. */
  heldPrompt<O extends { server: string; name: string }>(owner: O): O;
  forward<T extends StandardSchemaV1>(
    owner: string,
    method: string,
    params: Record<string, unknown>,
    schema: T,
  ): Promise<StandardSchemaV1.InferOutput<T>>;
  /**
   * prompts/get and resources/read, forwarded as calls are: what the server asks the client during
   * them reaches only this client (its session, or an input round), with their input rounds.
   */
  call<R extends GetPromptResult | ReadResourceResult>(
    ctx: ServerContext,
    method: "prompts/get" | "resources/read",
    owner: string,
    target: string,
    params: Record<string, unknown>,
  ): Promise<R | InputRequiredResult>;
}

export function createFederationContext(
  session: ClientSession | undefined,
  deps: FederationDeps,
): FederationContext {
  const { pool, capabilities } = deps;
  const naming = deps.naming ?? FEDERATED_NAMING;
  const unheld = (owner: string) => {
    const hold = capabilities?.serverHold(owner);
    if (hold) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, hold);
    return owner;
  };
  return {
    deps,
    session,
    naming,
    hinted: (answer, from) =>
      deps.era === "modern" ? { ...answer, ...mergedHint(from, deps.audience) } : answer,
    unheld,
    byUri(uri) {
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
    },
    byName(name, what) {
      const owner = naming.fromName(name, deps.serverNames());
      if (!owner) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `unknown ${what} ${name}: its name starts with <server>__`,
        );
      }
      return owner;
    },
    heldPrompt(owner) {
      unheld(owner.server);
      if (capabilities?.isHeld(owner.server, "prompt", owner.name)) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `the prompt ${owner.name} of ${owner.server} is new or changed since it was approved, and is held until ` +
            `the user runs \`mcpproxy approve ${owner.server}\``,
        );
      }
      return owner;
    },
    forward: (owner, method, params, schema) => pool.request(owner, { method, params }, schema),
    async call<R extends GetPromptResult | ReadResourceResult>(
      ctx: ServerContext,
      method: "prompts/get" | "resources/read",
      owner: string,
      target: string,
      params: Record<string, unknown>,
    ): Promise<R | InputRequiredResult> {
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
    },
  };
}
