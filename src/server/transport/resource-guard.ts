import type { AuthInfo, ServerContext } from "@modelcontextprotocol/server";
import type { Context, Hono, MiddlewareHandler } from "hono";
import type { AccessTokens, Principal } from "../../auth/resource/access-token.ts";
import type { ResolvedHttpAuth } from "../../config/http-auth-config.ts";
import type { QuotaHolder } from "../../limits/principal-quotas.ts";
import type { Logger } from "../../log.ts";

/**
 * The HTTP listener as an OAuth 2.1 protected resource (`mcpproxy.httpAuth`): every request but
 * /health, CORS preflights and the metadata document needs `Authorization: Bearer <JWT>` that
 * access-token.ts admits. /health takes a token too, but never refuses: a valid one widens what it
 * tells (health-route.ts). Refusals follow RFC 6750 §3 and RFC 9728 §5.1: 401 with
 * `WWW-Authenticate: Bearer resource_metadata="…"` (and `error="invalid_token"` when a token was
 * given), 403 `insufficient_scope` naming the scopes, and 503 with Retry-After while the issuer's
 * keys cannot be read (the token may well be good: a 401 would send the client to log in again
 * for nothing). The admitted principal is kept with the request (`principalOfRequest`).
 */
const METADATA_PATH = "/.well-known/oauth-protected-resource";

/** Seconds a client is told to wait while the issuer cannot be reached. */
const RETRY_AFTER_S = 5;

const principals = new WeakMap<Request, Principal>();

/** Who sent this request, when the listener takes access tokens and admitted it. */
export function principalOfRequest(request: Request): Principal | undefined {
  return principals.get(request);
}

/**
 * What the MCP handlers see of the principal (`ctx.http.authInfo`): its key as `clientId` (input
 * rounds and kept results are scoped by it), never the token (`token` stays empty).
 */
export function authInfoOf(principal: Principal): AuthInfo {
  return {
    token: "",
    clientId: principal.key,
    scopes: [...principal.scopes],
    ...(principal.expiresAt !== undefined ? { expiresAt: principal.expiresAt } : {}),
    extra: {
      subject: principal.subject,
      issuer: principal.issuer,
      callsPerMinute: principal.rule.callsPerMinute,
    },
  };
}

/** The principal of an MCP request (access tokens only: the static bearer token names nobody). */
export function callerOf(ctx: ServerContext): QuotaHolder | undefined {
  return holderOf(ctx.http?.authInfo);
}

/** The principal an HTTP request's authentication names, if any (`callerOf`'s, before the SDK sees it). */
export function holderOf(auth: AuthInfo | undefined): QuotaHolder | undefined {
  const extra = auth?.extra as { subject?: unknown; callsPerMinute?: unknown } | undefined;
  if (!auth || typeof extra?.subject !== "string") return undefined;
  return {
    key: auth.clientId,
    subject: extra.subject,
    ...(typeof extra.callsPerMinute === "number" ? { callsPerMinute: extra.callsPerMinute } : {}),
  };
}

/** The resource this proxy is: `resource` as configured, else this listener's /mcp. */
function resourceOf(settings: ResolvedHttpAuth, c: Context): string {
  return settings.resource ?? `${new URL(c.req.url).origin}/mcp`;
}

/** The metadata document's URL for the resource (RFC 9728 §3.1: the well-known part before its path). */
function metadataUrlOf(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === "/" ? "" : url.pathname.replace(/\/+$/, "");
  return `${url.origin}${METADATA_PATH}${path}`;
}

/** Serves the metadata document at the root form and at each form naming a path (RFC 9728 §3.1). */
export function serveResourceMetadata(app: Hono, settings: ResolvedHttpAuth): void {
  const document = (c: Context) =>
    c.json(
      {
        resource: resourceOf(settings, c),
        authorization_servers: [settings.issuer],
        bearer_methods_supported: ["header"],
        scopes_supported: [...settings.requiredScopes],
        resource_signing_alg_values_supported: [...settings.algorithms],
        resource_name: "mcpproxy",
      },
      200,
      { "cache-control": "max-age=300" },
    );
  app.get(METADATA_PATH, document);
  app.get(`${METADATA_PATH}/*`, document);
}

const quoted = (text: string) => `"${text.replace(/["\\\r\n]/g, " ")}"`;

export function requirePrincipal(
  settings: ResolvedHttpAuth,
  tokens: AccessTokens,
  logger: Logger,
): MiddlewareHandler {
  // Refusals are logged at most once a second (with how many went unsaid): a flood of bad tokens
  // must not fill the log.
  let loggedAt = 0;
  let unsaid = 0;
  const noteRefusal = (status: number, description: string, path: string) => {
    const now = Date.now();
    if (now - loggedAt < 1_000) {
      unsaid++;
      return;
    }
    const more = unsaid > 0 ? ` (and ${unsaid} more refusals since the last line)` : "";
    logger.info(`refused an HTTP request (${status}): ${description}${more}`, { path });
    loggedAt = now;
    unsaid = 0;
  };
  return async (c, next) => {
    if (c.req.method === "OPTIONS" || c.req.path.startsWith(METADATA_PATH)) return next();
    const token = /^bearer +(\S+) *$/i.exec(c.req.header("authorization") ?? "")?.[1];
    if (c.req.path === "/health") {
      // Probes carry no access token (or the static one a deployment mounts for them): anything
      // but a valid token is not refused here, it only gets the overall status.
      const verdict = token ? await tokens.verify(token) : undefined;
      if (verdict?.ok) principals.set(c.req.raw, verdict.principal);
      return next();
    }
    const metadata = `resource_metadata=${quoted(metadataUrlOf(resourceOf(settings, c)))}`;
    if (!token) {
      c.header("WWW-Authenticate", `Bearer ${metadata}`);
      return c.json(
        { error: "unauthorized", error_description: "send Authorization: Bearer <access token>" },
        401,
      );
    }
    const verdict = await tokens.verify(token);
    if (verdict.ok) {
      principals.set(c.req.raw, verdict.principal);
      return next();
    }
    noteRefusal(verdict.status, verdict.description, c.req.path);
    const body = { error: verdict.error, error_description: verdict.description };
    if (verdict.status === 503) {
      c.header("Retry-After", String(RETRY_AFTER_S));
      return c.json(body, 503);
    }
    if (verdict.error === "access_denied") return c.json(body, 403);
    const scope =
      verdict.error === "insufficient_scope" ? `, scope=${quoted(settings.requiredScopes.join(" "))}` : "";
    c.header(
      "WWW-Authenticate",
      `Bearer error=${quoted(verdict.error)}, error_description=${quoted(verdict.description)}${scope}, ${metadata}`,
    );
    return c.json(body, verdict.status);
  };
}
