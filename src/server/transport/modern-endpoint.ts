import type { AuthInfo, Server } from "@modelcontextprotocol/server";
import { createMcpHandler } from "@modelcontextprotocol/server";
import type { Logger } from "../../log.ts";
import type { ClientEra } from "../client-era.ts";
import type { ChangeFeed } from "../federation/change-feed.ts";
import { isListenRequest, type ListenAdmission } from "./listen-admission.ts";
import { releasedAtEnd } from "./released-at-end.ts";

/**
 * One MCP endpoint of the HTTP app: /mcp, or a profile's /mcp/p/<name>. Its 2026-07-28 requests get
 * a server per request from the SDK's createMcpHandler (nothing a request leaves behind reaches the
 * next one), its listen streams hear of changes from `changes` and hold their resource
 * subscriptions through `listens` until they end. `inFlight` counts modern requests across every
 * endpoint, listen streams included: they are bounded like sessions, as each holds a stream.
 */
export interface McpEndpoint {
  /** The path it answers at (/mcp, or a profile's /mcp/p/<name>), as its refusals name it. */
  key: string;
  createServer: (era: ClientEra) => Server;
  /** `authInfo`: who sent it (the bearer token's holder, or the access token's principal). */
  serveModern(request: Request, parsedBody: unknown, authInfo?: AuthInfo): Promise<Response>;
  close(): Promise<void>;
}

export interface McpEndpointOptions {
  key: string;
  createServer: (era: ClientEra) => Server;
  listens?: ListenAdmission | undefined;
  changes?: ChangeFeed | undefined;
  maxSubscriptions: number;
  keepAliveMs?: number | undefined;
  logger: Logger;
  inFlight: { count: number };
}

export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const { listens, inFlight } = options;
  const modern = createMcpHandler(() => options.createServer("modern"), {
    legacy: "reject",
    responseMode: "auto",
    maxSubscriptions: options.maxSubscriptions,
    ...(options.keepAliveMs !== undefined ? { keepAliveMs: options.keepAliveMs } : {}),
    onerror: (error) => options.logger.debug(`modern request: ${error.message}`),
  });
  const detach = options.changes?.attach(modern.notify);
  return {
    key: options.key,
    createServer: options.createServer,
    async serveModern(request, parsedBody, authInfo) {
      const listen =
        listens && isListenRequest(parsedBody)
          ? listens.admit(parsedBody, `http-listen:${crypto.randomUUID()}`)
          : undefined;
      inFlight.count++;
      const release = () => {
        inFlight.count--;
        listen?.release();
      };
      try {
        const response = await modern.fetch(request, {
          parsedBody: listen?.message ?? parsedBody,
          ...(authInfo ? { authInfo } : {}),
        });
        return releasedAtEnd(response, release);
      } catch (error) {
        release();
        throw error;
      }
    },
    async close() {
      detach?.();
      // Each listen stream ends gracefully: the empty answer to its request.
      await modern.close().catch(() => undefined);
    },
  };
}
