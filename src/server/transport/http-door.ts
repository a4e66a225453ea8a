import { createHash } from "node:crypto";
import type { AuthInfo } from "@modelcontextprotocol/server";
import type { Context, Hono, MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { AccessTokens } from "../../auth/resource/access-token.ts";
import type { ResolvedHttpAuth } from "../../config/http-auth-config.ts";
import type { Logger } from "../../log.ts";
import type { Ancestry } from "../../upstream/proxy-ancestry.ts";
import { bearerToken } from "./bearer-token.ts";
import { hostGuard } from "./host-guard.ts";
import { loopGuard } from "./loop-guard.ts";
import { authInfoOf, principalOfRequest, requirePrincipal, serveResourceMetadata } from "./resource-guard.ts";

/**
 * The door of the HTTP app (http-app.ts), in front of every route: the DNS-rebinding guard, the
 * loop guard, CORS for the origins the guard lets through, and the bearer token or access tokens;
 * then who came in: the caller a request's handlers are told of, and the profile an access rule
 * confines it to.
 */
export interface DoorOptions {
  bindHost: string;
  logger: Logger;
  /** This proxy's place in a chain of proxies; requests from a chain it is already in are refused. */
  ancestry?: Ancestry | undefined;
  configPath?: string;
  /** When set, every request needs `Authorization: Bearer <token>` (bearer-token.ts). */
  token?: string | undefined;
  /**
   * `mcpproxy.httpAuth`: every request needs a JWT access token (resource-guard.ts), and `token`
   * is not asked. Each request's principal is its caller; one whose access rule names a profile is
   * served that profile at /mcp and /sse, and no other.
   */
  httpAuth?: { settings: ResolvedHttpAuth; tokens: AccessTokens } | undefined;
  /**
   * Requests let through without the token or an access token, because what answers them checks
   * them itself: the console's sign-in page, its one-time link, and requests with its session cookie
   * (src/console/). Nothing else, and never /mcp.
   */
  admits?: ((request: Request) => boolean) | undefined;
}

/** Who came through the door. */
export interface HttpDoor {
  /** Who sent a request: the access token's principal, else the bearer token's holder (or nobody). */
  authOf(c: Context): AuthInfo | undefined;
  /** The profile an access rule confines the request's principal to, if any. */
  confinedTo(c: Context): string | undefined;
  /** The refusal of a principal confined to `profile` that asked for something else. */
  forbidden(c: Context, profile: string): Response;
  /** Whether the door takes access tokens (`mcpproxy.httpAuth`) rather than the bearer token. */
  takesAccessTokens: boolean;
  /** Whether it asks for credentials at all (a token or access tokens); a loopback serve without them does not. */
  asksCredentials: boolean;
}

/** The body of a refusal at the HTTP level: a JSON-RPC error without an id. */
export const jsonRpcError = (message: string, code = -32000) => ({
  jsonrpc: "2.0",
  error: { code, message },
  id: null,
});

/** Puts the door in front of every route of `app` (call it before adding any). */
export function openDoor(app: Hono, options: DoorOptions): HttpDoor {
  // Who calls, as the requestState of an input round is bound to it (input-rounds.ts): the holder of
  // the bearer token, named by its digest (the token itself goes nowhere past the check).
  const authInfo: AuthInfo | undefined =
    options.token && !options.httpAuth
      ? {
          token: "",
          clientId: `bearer:${createHash("sha256").update(options.token).digest("base64url").slice(0, 22)}`,
          scopes: [],
        }
      : undefined;

  app.use("*", hostGuard({ bindHost: options.bindHost }));
  if (options.ancestry) app.use("*", loopGuard(options.ancestry, options.configPath ?? "(unknown)"));
  // Browser-based local clients (inspectors, web UIs) need CORS. Only origins the guard above let
  // through ever get here, so reflecting the origin grants nothing to a foreign page. A request
  // without an Origin (every client but a browser's) needs none of its headers but `Vary: Origin`:
  // Hono's middleware would rebuild each response to add them.
  const corsHeaders = cors({
    origin: (origin) => origin,
    allowMethods: ["GET", "POST", "DELETE", "OPTIONS"],
    allowHeaders: [
      "content-type",
      "accept",
      "authorization",
      "mcp-session-id",
      "mcp-protocol-version",
      "mcp-method",
      "mcp-name",
      "last-event-id",
      "traceparent",
      "tracestate",
    ],
    exposeHeaders: ["mcp-session-id", "mcp-protocol-version"],
  });
  app.use("*", async (c, next) => {
    if (c.req.header("origin") !== undefined) return corsHeaders(c, next);
    await next();
    c.header("Vary", "Origin", { append: true });
  });
  const httpAuth = options.httpAuth;
  const admits = options.admits;
  const unlessAdmitted = (guard: MiddlewareHandler): MiddlewareHandler =>
    admits ? (c, next) => (admits(c.req.raw) ? next() : guard(c, next)) : guard;
  if (httpAuth) {
    serveResourceMetadata(app, httpAuth.settings);
    app.use("*", unlessAdmitted(requirePrincipal(httpAuth.settings, httpAuth.tokens, options.logger)));
  } else if (options.token) app.use("*", unlessAdmitted(bearerToken(options.token)));

  return {
    authOf(c) {
      const principal = principalOfRequest(c.req.raw);
      return principal ? authInfoOf(principal) : authInfo;
    },
    confinedTo: (c) => principalOfRequest(c.req.raw)?.rule.profile,
    forbidden: (c, profile) =>
      c.json(
        jsonRpcError(
          `Forbidden: your access rule (mcpproxy.httpAuth.access) gives you the profile ${profile} only`,
        ),
        403,
      ),
    takesAccessTokens: httpAuth !== undefined,
    asksCredentials: httpAuth !== undefined || options.token !== undefined,
  };
}
