import type {
  FetchLike,
  OAuthClientProvider,
  SubscriptionFilter,
  Tool,
  Transport,
} from "@modelcontextprotocol/client";
import { Client, ProtocolError, SseError } from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/parse-server.ts";
import { ProxyError } from "../errors.ts";
import { createOutputTail } from "../output-tail.ts";
import { launchRefusal } from "../security/launch-spec.ts";
import type { EraStore } from "../store/sqlite/era-store.ts";
import { PRODUCT, VERSION } from "../version.ts";
import { boundedFetch } from "./bounded-fetch.ts";
import { type CallTags, createCallTags } from "./call-tags.ts";
import { ChildProcessTransport } from "./child-process-transport.ts";
import {
  type EraPlan,
  eraKey,
  exitedOnProbe,
  firstPlan,
  isWorthStoring,
  negotiationFor,
  nextPlan,
  priorFor,
  verdictOf,
} from "./era-negotiation.ts";
import { createHealthCheck } from "./health-check.ts";
import { createLeanCalls, type LeanCalls } from "./lean-call.ts";
import { CLIENT_CAPABILITIES, type WireClaims, watchModernWire } from "./modern-wire.ts";
import { paramHeaderLookup } from "./param-headers.ts";
import { plainPostFor } from "./plain-http-post.ts";
import { type RelayHandlers, relayBetween } from "./relayed-messages.ts";
import { type ListedCapabilities, listAllTools, listCapabilities, type ToolListing } from "./server-lists.ts";
import { sharedSchemaValidator } from "./shared-schema-validator.ts";
import { createToolRelist } from "./tool-relist.ts";
import { resolveBounds, type UpstreamBounds } from "./upstream-bounds.ts";
import { closedReason, connectFailure, upstreamErrorText } from "./upstream-errors.ts";
import { keepListening, type Listening, listenFilter } from "./upstream-listen.ts";
import { createTransport } from "./upstream-transport.ts";

/** Why a connect ended without a result: the proxy stopped while it was under way. */
const SHUTTING_DOWN = "the proxy is shutting down";

/**
 * One live MCP client session to one upstream server, in the protocol era it speaks. A stdio child
 * gets the environment child-env.ts builds: a baseline, the network/CA/locale set and what the
 * person named, never the proxy's whole environment, which may hold secrets meant for other servers.
 */
export interface UpstreamConnection {
  readonly server: ServerConfig;
  readonly client: Client;
  readonly tools: readonly Tool[];
  /** Malformed entries of the last tools/list, left out. */
  readonly skipped: readonly string[];
  /** Which call the server's requests to the client belong to (call-tags.ts). */
  readonly tags: CallTags;
  /** The prompts and resource templates it listed when it connected (when it declares them), for pinning. */
  readonly listed: ListedCapabilities;
  /** The protocol era spoken with it: `modern` (2026-07-28) or `legacy` (the 2025 revisions and older). */
  readonly era: "modern" | "legacy";
  /**
   * Its tools/call past the SDK's request machinery (lean-call.ts); undefined where the SDK cancels
   * a call by ending its request's own stream (a 2026 server over HTTP).
   */
  readonly lean: LeanCalls | undefined;
  /** The protocol version settled on (2026-07-28, 2025-11-25, …). */
  readonly protocolVersion: string | undefined;
  /** What the server says it is for (initialize's or server/discover's `instructions`); untrusted text. */
  readonly instructions: string | undefined;
  /** The Mcp-Param-* headers a call of `tool` sends (a 2026 server over HTTP; param-headers.ts), or undefined. */
  paramHeaders(tool: string, args: Record<string, unknown> | undefined): Record<string, string> | undefined;
  /**
   * A 2026 server: opens its listen stream again with the resource subscriptions as they are now
   * (`ConnectOptions.resourceSubscriptions`) and resolves with what it honoured (undefined when
   * nothing is listened for). A 2025 server (it has resources/subscribe) resolves undefined.
   */
  relisten(): Promise<SubscriptionFilter | undefined>;
  /** Lists the tools again, as on list_changed (another replica heard of a change: store-hints). */
  relistTools(): void;
  close(): Promise<void>;
}

/**
 * How to connect: what bounds the server (upstream-bounds.ts), how to reach it, whom to tell what
 * it sends towards the client (relayed-messages.ts) and what else happens to the connection.
 */
export interface ConnectOptions extends UpstreamBounds, RelayHandlers {
  /** Called after the server said its tool list changed and it was listed again. */
  onToolsChanged?: (tools: readonly Tool[]) => void;
  /** Called once when an established connection ends (the child died, the stream closed). */
  onClosed?: (reason: string) => void;
  env?: Readonly<Record<string, string | undefined>>;
  /** Ends a connect that is still under way (the proxy is shutting down); the child is stopped. */
  signal?: AbortSignal;
  /**
   * Aborted when the proxy stops (its client left, a signal): a stdio server is ended at once,
   * connected or not (child-process-transport.ts), instead of on the polite schedule.
   */
  stopSignal?: AbortSignal | undefined;
  /** The proxy chain above the server (see proxy-ancestry.ts), passed on to it. */
  ancestry?: string;
  /**
   * Over HTTP, how often a connection is pinged while it is up (0: never): a remote server that
   * went away is noticed then, not at the next call.
   */
  healthCheckMs?: number;
  /** A re-list after list_changed failed (the previous list stays). */
  onListFailed?: (reason: string) => void;
  /** Logs in to an HTTP server that asks for OAuth (see src/auth); unset, no OAuth. */
  authProvider?: OAuthClientProvider | undefined;
  /** An HTTP transport made by the caller (`auth login` finishes the authorization on it). */
  transport?: Transport | undefined;
  /**
   * The server's own resource URIs the proxy's clients want updates of, kept across connections: a
   * 2026 server's listen stream asks for them (read at each open; see `relisten`).
   */
  resourceSubscriptions?: (() => readonly string[]) | undefined;
  /**
   * Where the server's protocol era is remembered between connects (index/era-store.ts): read to
   * skip the probe, written when it was found or changed. Unset, every connect probes.
   */
  eras?: EraStore | undefined;
}

/**
 * Starts the transport, finds the server's protocol era (era-negotiation.ts), connects and lists
 * every tool, all within `server.timeoutMs`. On failure the child is stopped and the error names
 * the server, the reason and its stderr.
 */
export async function connectUpstream(
  server: ServerConfig,
  options: ConnectOptions = {},
): Promise<UpstreamConnection> {
  const refusal = launchRefusal(server);
  if (refusal) throw new ProxyError("AWAITING_APPROVAL", refusal);
  // Nothing is started once the proxy stops (a connect queued behind others would spawn and be killed).
  if (options.signal?.aborted || options.stopSignal?.aborted) {
    throw new ProxyError("UPSTREAM_UNAVAILABLE", SHUTTING_DOWN);
  }
  const tail = createOutputTail();
  const { maxResultBytes, toolList: bounds } = resolveBounds(server, options);
  const plainFetch: FetchLike = (url, init) => fetch(url, init);
  const tags = createCallTags(boundedFetch(plainFetch, maxResultBytes));
  const deadline = Date.now() + server.timeoutMs;
  // The client of the attempt under way, and after connect the connection's.
  let client: Client | undefined;
  let isOpen = false;
  let isClosing = false;
  let endReason: string | undefined;
  let listening: Listening | undefined;
  /** The attempt's wire (modern-wire.ts), and once connected over stdio its lean calls. */
  let claims: WireClaims | undefined;
  let lean: LeanCalls | undefined;
  /** Ends an open connection that stopped working; onClosed reports it with this reason. */
  const endWith = (reason: string) => {
    if (!isOpen || isClosing || endReason !== undefined) return;
    endReason = reason;
    void client?.close();
  };
  // Is a remote server still there? (health-check.ts)
  const health = createHealthCheck({ client: () => client, isOpen: () => isOpen, onGone: endWith });

  let current: ToolListing = { tools: [], skipped: [] };
  // Its tools listed again on list_changed, a storm of them coalesced (tool-relist.ts).
  const onToolsChanged = createToolRelist({
    list: () => listAllTools(client!, server.timeoutMs, bounds),
    isOpen: () => isOpen,
    onListed: (fresh) => {
      current = fresh;
      options.onToolsChanged?.(fresh.tools);
    },
    onFailed: (reason) => options.onListFailed?.(reason),
  });

  /** A client wired to this connection's handlers; only the last attempt's reports its end. */
  const createClient = (plan: EraPlan): Client => {
    const created = new Client(
      { name: PRODUCT, version: VERSION },
      {
        capabilities: CLIENT_CAPABILITIES,
        jsonSchemaValidator: sharedSchemaValidator,
        versionNegotiation: negotiationFor(plan, server, deadline - Date.now()),
        // A 2026 server's input requests are the caller's to answer, never the proxy's own handlers'.
        inputRequired: { autoFulfill: false },
      },
    );
    relayBetween(created, options, tags);
    created.setNotificationHandler("notifications/tools/list_changed", onToolsChanged);
    created.onclose = () => {
      if (created !== client) return;
      lean?.closeAll();
      health.stop();
      listening?.stop();
      if (isOpen && !isClosing) options.onClosed?.(endReason ?? closedReason(tail.text()));
      isOpen = false;
    };
    // Transport errors after connect (garbage on stdout, one failed POST) are not fatal by themselves;
    // a real end of the connection arrives through onclose. The exception is the event stream of the
    // legacy SSE transport: the session lives exactly as long as that stream, and responses to
    // requests in flight could only ever arrive on it, so when it breaks the connection is over.
    created.onerror = (error) => {
      if (created !== client) return;
      if (error instanceof SseError) {
        endWith(
          `the SSE event stream ended (${upstreamErrorText(error)}); the server restarted or went away`,
        );
      } else if (server.transport === "streamable-http" && !(error instanceof ProtocolError)) {
        // A broken GET event stream (ECONNRESET), a failed POST: is the server still there?
        void health.check();
      }
    };
    return created;
  };

  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const timeoutOrAbort = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`did not finish initialize and tools/list within ${server.timeoutMs} ms`)),
      server.timeoutMs,
    );
    onAbort = () => reject(new ProxyError("UPSTREAM_UNAVAILABLE", SHUTTING_DOWN));
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
  });
  timeoutOrAbort.catch(() => undefined);
  const stored = options.eras?.get(server.name);
  let plan = firstPlan(server, stored);
  let transport: Transport | undefined;
  try {
    for (;;) {
      transport = createTransport(server, options, (chunk) => tail.push(chunk), tags.fetch);
      tags.tagCalls(transport);
      claims = watchModernWire(transport, { checkParamHeaders: server.transport === "streamable-http" });
      const attempt = createClient(plan);
      client = attempt;
      const prior = priorFor(plan);
      const opened = transport;
      try {
        const [listing, listed] = await Promise.race([
          (async () => {
            await attempt.connect(opened, { timeout: deadline - Date.now(), ...(prior ? { prior } : {}) });
            // Prompts and templates get less time: a server slow to list them still connects.
            return Promise.all([
              listAllTools(attempt, server.timeoutMs, bounds),
              listCapabilities(attempt, Math.min(5_000, server.timeoutMs / 2)),
            ]);
          })(),
          timeoutOrAbort,
        ]);
        current = listing;
        return connected(listed);
      } catch (error) {
        // A child killed from outside is not one that exits on the probe: it is not started again.
        const wasKilled = opened instanceof ChildProcessTransport && opened.wasKilled;
        const next =
          options.transport || options.signal?.aborted || wasKilled ? undefined : nextPlan(plan, error);
        if (!next || Date.now() >= deadline) throw error;
        // The attempt's client and child end here; its onclose reports nothing, it was never open.
        await attempt.close().catch(() => undefined);
        await opened.close().catch(() => undefined);
        // A child that exits on the probe is a 2025 server; remembered at once, so that a server
        // that exits on every start (a crash loop) is not probed, and started twice, on each retry.
        if (exitedOnProbe(error)) {
          options.eras?.put(server.name, { era: "legacy", key: eraKey(server), checkedAt: Date.now() });
        }
        plan = next;
      }
    }
  } catch (error) {
    isClosing = true;
    await client?.close().catch(() => undefined);
    await transport?.close().catch(() => undefined);
    // Give the child's last stderr lines a moment to arrive before reporting them.
    await new Promise((resolve) => setTimeout(resolve, 50));
    throw new ProxyError("UPSTREAM_CONNECT_FAILED", connectFailure(server, error, tail.text()), {
      cause: error,
    });
  } finally {
    clearTimeout(timer);
    if (onAbort) options.signal?.removeEventListener("abort", onAbort);
  }

  /** The connection over the client that connected. */
  function connected(listed: ListedCapabilities): UpstreamConnection {
    const live = client!;
    isOpen = true;
    const verdict = verdictOf(live, server);
    if (verdict && options.eras && isWorthStoring(verdict, stored)) options.eras.put(server.name, verdict);
    const era = live.getProtocolEra() === "modern" ? "modern" : "legacy";
    if (server.transport !== "stdio" && options.healthCheckMs) health.startEvery(options.healthCheckMs);
    if (era === "modern") {
      listening = keepListening(live, {
        filter: () => listenFilter(live, options.resourceSubscriptions?.()),
        timeoutMs: server.timeoutMs,
        onReopened: onToolsChanged,
        onProblem: (reason) => options.onListFailed?.(reason),
      });
    }
    const headers = paramHeaderLookup(era === "modern" && server.transport === "streamable-http");
    // Not where the SDK cancels by ending the request's own stream (a 2026 server over HTTP).
    const hasRequestStreams = (transport as { hasPerRequestStream?: boolean } | undefined)
      ?.hasPerRequestStream;
    // A 2025 server over streamable HTTP: its lean calls' POSTs past the SDK's transport too.
    const post =
      era === "legacy" && transport
        ? plainPostFor(transport, {
            given: tags.fetch,
            base: plainFetch,
            maxBytes: maxResultBytes,
            notePosted: tags.notePosted,
          })
        : undefined;
    lean =
      claims && (era === "legacy" || hasRequestStreams !== true)
        ? createLeanCalls(live, claims, post)
        : undefined;
    return {
      server,
      client: live,
      era,
      lean,
      protocolVersion: live.getNegotiatedProtocolVersion(),
      instructions: live.getInstructions(),
      get tools() {
        return current.tools;
      },
      get skipped() {
        return current.skipped;
      },
      tags,
      listed,
      paramHeaders: (tool, args) => headers(current.tools, tool, args),
      relisten: async () => listening?.refresh(),
      relistTools: onToolsChanged,
      async close() {
        isClosing = true;
        health.stop();
        listening?.stop();
        await live.close().catch(() => undefined);
      },
    };
  }
}
