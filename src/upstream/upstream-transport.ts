import type { FetchLike, OAuthClientProvider, Transport } from "@modelcontextprotocol/client";
import { SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { DEFAULT_MAX_RESULT_BYTES } from "../config/load-config.ts";
import type { HttpServerConfig, ServerConfig } from "../config/parse-server.ts";
import { childEnvironment } from "./child-env.ts";
import { ChildProcessTransport } from "./child-process-transport.ts";
import { ANCESTRY_HEADER } from "./proxy-ancestry.ts";

/** What a server's transport is made from (upstream-connection.ts's ConnectOptions). */
export interface TransportOptions {
  env?: Readonly<Record<string, string | undefined>>;
  ancestry?: string;
  maxResultBytes?: number;
  stopSignal?: AbortSignal | undefined;
  authProvider?: OAuthClientProvider | undefined;
  /** An HTTP transport made by the caller, used as it is. */
  transport?: Transport | undefined;
}

/**
 * A fresh transport to the server: its own child for a stdio server (started by connect), the
 * SDK's client transport for an HTTP one. Each connect attempt gets one (era-negotiation.ts).
 */
export function createTransport(
  server: ServerConfig,
  options: TransportOptions,
  onStderr: (chunk: Uint8Array) => void,
  fetch: FetchLike,
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
        onStderr,
        stopSignal: options.stopSignal,
      });
    case "streamable-http":
    case "sse":
      return options.transport ?? httpTransport(server, options.authProvider, options.ancestry, fetch);
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
