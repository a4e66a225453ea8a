import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport, SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type ClientCapabilities,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type Result,
  ResultSchema,
  type ServerNotification,
  type ServerRequest,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { DEFAULT_MAX_RESULT_BYTES } from "../config/load-config.ts";
import type { HttpServerConfig, ServerConfig } from "../config/parse-server.ts";
import { ProxyError } from "../errors.ts";
import { createOutputTail, type OutputTail } from "../output-tail.ts";
import { launchRefusal } from "../security/launch-spec.ts";
import { redactSecrets } from "../security/redact-secrets.ts";
import { PRODUCT, VERSION } from "../version.ts";
import { type CallTags, createCallTags } from "./call-tags.ts";
import { childEnvironment } from "./child-env.ts";
import { ChildProcessTransport } from "./child-process-transport.ts";
import { ANCESTRY_HEADER } from "./proxy-ancestry.ts";
import { sharedSchemaValidator } from "./shared-schema-validator.ts";
import { upstreamErrorText } from "./upstream-errors.ts";

/** Why a connect ended without a result: the proxy stopped while it was under way. */
export const SHUTTING_DOWN = "the proxy is shutting down";

/**
 * One live MCP client session to one upstream server. A stdio child gets the environment
 * child-env.ts builds: a baseline, the network/CA/locale set and what the person named, never the
 * proxy's whole environment, which may hold secrets meant for other servers.
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
  close(): Promise<void>;
}

export interface ConnectOptions {
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
  /** The longest message accepted from a stdio server, in bytes. */
  maxResultBytes?: number;
  /** Logs in to an HTTP server that asks for OAuth (see src/auth); unset, no OAuth. */
  authProvider?: OAuthClientProvider | undefined;
  /** An HTTP transport made by the caller (`auth login` finishes the authorization on it). */
  transport?: Transport | undefined;
  /**
   * A request the server sends to the client (sampling, elicitation, roots): relayed by the proxy;
   * `tag` names the call it belongs to when the wire tells (call-tags.ts).
   */
  onRequest?: (request: ClientBoundRequest, signal: AbortSignal, tag: string | undefined) => Promise<Result>;
  /** A log message, a resource update or a resource or prompt list change from the server. */
  onNotification?: (notification: RelayedNotification) => void;
}

/** The requests a server may send its client that the proxy relays to its own clients. */
export type ClientBoundRequest = Extract<
  ServerRequest,
  { method: "sampling/createMessage" | "elicitation/create" | "roots/list" }
>;
export type RelayedNotification = Extract<
  ServerNotification,
  {
    method:
      | "notifications/message"
      | "notifications/resources/updated"
      | "notifications/resources/list_changed"
      | "notifications/prompts/list_changed";
  }
>;

/**
 * What the proxy declares to every upstream: it relays sampling, elicitation (form and URL) and
 * roots to the client that made the call. Declared by `index` too, whose handlers refuse: servers
 * such as server-everything list some tools only to clients with these capabilities, and the
 * index must hold the tools that `serve` offers.
 */
export const CLIENT_CAPABILITIES: ClientCapabilities = {
  sampling: {},
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true },
};

function createTransport(
  server: ServerConfig,
  options: ConnectOptions,
  tail: OutputTail,
  tags: CallTags,
): Transport {
  const env = options.env ?? process.env;
  switch (server.transport) {
    case "stdio":
      return new ChildProcessTransport({
        command: server.command,
        args: server.args,
        env: childEnvironment(server, env, options.ancestry),
        cwd: server.cwd,
        maxResultBytes: options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
        onStderr: (chunk) => tail.push(chunk),
        stopSignal: options.stopSignal,
      });
    case "streamable-http":
    case "sse":
      return options.transport ?? httpTransport(server, options.authProvider, options.ancestry, tags.fetch);
  }
}

/** The SDK's client transport for an HTTP server: its headers, the proxy chain, OAuth when given. */
export function httpTransport(
  server: HttpServerConfig,
  authProvider?: OAuthClientProvider,
  ancestry?: string,
  fetch?: FetchLike,
): StreamableHTTPClientTransport | SSEClientTransport {
  const headers = { ...server.headers, ...(ancestry ? { [ANCESTRY_HEADER]: ancestry } : {}) };
  const extra = { ...(authProvider ? { authProvider } : {}), ...(fetch ? { fetch } : {}) };
  return server.transport === "sse"
    ? new SSEClientTransport(new URL(server.url), { requestInit: { headers }, ...extra })
    : new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers }, ...extra });
}

/**
 * Whether a request failed because the server no longer knows our session: it restarted, or
 * expired the session. Such a request never ran, so it is safe to open a new session and send it
 * again. Streamable HTTP servers answer 404 (the spec), some 400 naming the session
 * ("No valid session ID provided"); a legacy SSE server answers the POST with 404 or 400.
 */
export function isSessionLost(error: unknown): boolean {
  if (error instanceof StreamableHTTPError) {
    return error.code === 404 || (error.code === 400 && /session/i.test(error.message));
  }
  const message = error instanceof Error ? error.message : "";
  return /Error POSTing to endpoint \(HTTP (404|400)\)/.test(message) && /session/i.test(message);
}

/** Whether a request failed because nothing listens at the server's address: it never arrived. */
export function isConnectionRefused(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (code === "ECONNREFUSED" || code === "ConnectionRefused") return true;
    current = current.cause;
  }
  return false;
}

/** What a server listed besides tools when it connected; a kind it does not offer (or failed to list) is absent. */
export interface ListedCapabilities {
  prompts?: readonly { name: string }[] | undefined;
  templates?: readonly { name: string }[] | undefined;
}

/**
 * Every page of a server's prompts and resource templates, as far as it declares them. A server
 * that fails to list them still connects: they are listed again when a client asks.
 */
async function listCapabilities(client: Client, timeoutMs: number): Promise<ListedCapabilities> {
  const declared = client.getServerCapabilities();
  const all = async (method: string, key: string) => {
    const items: { name: string }[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const result = (await client.request({ method, params: cursor ? { cursor } : {} }, ResultSchema, {
        timeout: timeoutMs,
      })) as Record<string, unknown>;
      const listed = result[key];
      if (!Array.isArray(listed)) break;
      for (const item of listed) {
        if (item && typeof item === "object" && typeof (item as { name?: unknown }).name === "string")
          items.push(item as { name: string });
      }
      cursor = typeof result.nextCursor === "string" && result.nextCursor ? result.nextCursor : undefined;
      if (!cursor) break;
    }
    return items;
  };
  const [prompts, templates] = await Promise.all([
    declared?.prompts ? all("prompts/list", "prompts").catch(() => undefined) : undefined,
    declared?.resources
      ? all("resources/templates/list", "resourceTemplates").catch(() => undefined)
      : undefined,
  ]);
  return { ...(prompts ? { prompts } : {}), ...(templates ? { templates } : {}) };
}

export interface ToolListing {
  tools: Tool[];
  /** Entries that are not tools (no name, no object input schema), described for the log. */
  skipped: string[];
}

/**
 * Every page of tools/list. Read leniently and checked tool by tool: the SDK's strict result
 * schema would reject a server's whole list for one malformed entry, and the agent would lose
 * all of that server's good tools with it.
 */
export async function listAllTools(client: Client, timeoutMs: number): Promise<ToolListing> {
  const listing: ToolListing = { tools: [], skipped: [] };
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const result = (await client.request(
      { method: "tools/list", params: cursor ? { cursor } : {} },
      ResultSchema,
      { timeout: timeoutMs },
    )) as { tools?: unknown; nextCursor?: unknown };
    if (!Array.isArray(result.tools)) throw new Error("tools/list returned no tools array");
    for (const entry of result.tools) {
      const problem = toolProblem(entry);
      if (problem) listing.skipped.push(problem);
      else listing.tools.push(entry as Tool);
    }
    cursor = typeof result.nextCursor === "string" && result.nextCursor ? result.nextCursor : undefined;
    if (!cursor) break;
  }
  return listing;
}

function toolProblem(entry: unknown): string | undefined {
  if (entry === null || typeof entry !== "object") return "an entry that is not an object";
  const { name, inputSchema } = entry as { name?: unknown; inputSchema?: unknown };
  if (typeof name !== "string" || name === "") return "a tool without a name";
  if (inputSchema === null || typeof inputSchema !== "object" || Array.isArray(inputSchema)) {
    return `${name} (no inputSchema object)`;
  }
  return undefined;
}

/**
 * Starts the transport, runs initialize and lists every tool, all within `server.timeoutMs`.
 * On failure the child is stopped and the error names the server, the reason and its stderr.
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
  const tags = createCallTags();
  const transport = createTransport(server, options, tail, tags);
  tags.tagCalls(transport);
  const client = new Client(
    { name: PRODUCT, version: VERSION },
    { capabilities: CLIENT_CAPABILITIES, jsonSchemaValidator: sharedSchemaValidator },
  );
  relayBetween(client, options, tags);
  let isOpen = false;
  let isClosing = false;
  let endReason: string | undefined;
  client.onclose = () => {
    if (isOpen && !isClosing) options.onClosed?.(endReason ?? closedReason(tail.text()));
    isOpen = false;
  };
  // Transport errors after connect (garbage on stdout, one failed POST) are not fatal by themselves;
  // a real end of the connection arrives through onclose. The exception is the event stream of the
  // legacy SSE transport: the session lives exactly as long as that stream, and responses to
  // requests in flight could only ever arrive on it, so when it breaks the connection is over.
  client.onerror = (error) => {
    if (error instanceof SseError && isOpen && !isClosing && endReason === undefined) {
      endReason = `the SSE event stream ended (${upstreamErrorText(error)}); the server restarted or went away`;
      void client.close();
    }
  };

  let current: ToolListing = { tools: [], skipped: [] };
  // Handled whatever the server declared: some servers send list_changed without declaring it.
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    if (!isOpen) return;
    const fresh = await listAllTools(client, server.timeoutMs).catch(() => undefined);
    if (fresh && isOpen) {
      current = fresh;
      options.onToolsChanged?.(fresh.tools);
    }
  });

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
  try {
    const [listing, listed] = await Promise.race([
      (async () => {
        await client.connect(transport, { timeout: server.timeoutMs });
        // Prompts and templates get less time: a server slow to list them still connects.
        return Promise.all([
          listAllTools(client, server.timeoutMs),
          listCapabilities(client, Math.min(5_000, server.timeoutMs / 2)),
        ]);
      })(),
      timeoutOrAbort,
    ]);
    isOpen = true;
    current = listing;
    const connection: UpstreamConnection = {
      server,
      client,
      get tools() {
        return current.tools;
      },
      get skipped() {
        return current.skipped;
      },
      tags,
      listed,
      async close() {
        isClosing = true;
        await client.close().catch(() => undefined);
      },
    };
    return connection;
  } catch (error) {
    isClosing = true;
    await client.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
    // Give the child's last stderr lines a moment to arrive before reporting them.
    await new Promise((resolve) => setTimeout(resolve, 50));
    throw new ProxyError("UPSTREAM_CONNECT_FAILED", connectFailure(server, error, tail.text()), {
      cause: error,
    });
  } finally {
    clearTimeout(timer);
    if (onAbort) options.signal?.removeEventListener("abort", onAbort);
  }
}

function relayBetween(client: Client, options: ConnectOptions, tags: CallTags): void {
  for (const schema of [CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema]) {
    client.setRequestHandler(schema, (request, extra) => {
      if (!options.onRequest) {
        throw new McpError(
          ErrorCode.MethodNotFound,
          `${request.method} is relayed to the agent's client by \`mcpproxy serve\` only`,
        );
      }
      const tag = tags.callOf(request, extra.requestId);
      return options.onRequest(request as ClientBoundRequest, extra.signal, tag) as never;
    });
  }
  for (const schema of [
    LoggingMessageNotificationSchema,
    ResourceUpdatedNotificationSchema,
    ResourceListChangedNotificationSchema,
    PromptListChangedNotificationSchema,
  ]) {
    client.setNotificationHandler(schema, (notification) => {
      options.onNotification?.(notification as RelayedNotification);
    });
  }
}

function connectFailure(server: ServerConfig, error: unknown, stderr: string): string {
  const code = (error as { code?: unknown })?.code;
  let reason = upstreamErrorText(error);
  if (server.transport === "stdio" && code === "ENOENT") {
    reason = `command not found: ${server.command} (check the command and PATH)`;
  } else if (/connection closed/i.test(reason)) {
    reason = "the server closed the connection during initialize (it probably exited)";
  }
  return `${reason}${stderr ? `\n  stderr: ${redactSecrets(stderr).split("\n").join("\n          ")}` : ""}`;
}

function closedReason(stderr: string): string {
  return `the connection closed${stderr ? `; stderr: ${redactSecrets(stderr.split("\n").slice(-5).join(" | "))}` : ""}`;
}
