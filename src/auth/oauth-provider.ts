import { randomBytes } from "node:crypto";
import type {
  OAuthClientInformationContext,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import {
  auth,
  computeScopeUnion,
  isStrictScopeSuperset,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import type { HttpServerConfig } from "../config/parse-server.ts";
import { ProxyError } from "../errors.ts";
import { PRODUCT } from "../version.ts";
import { currentCredentials, type OAuthRecord, type OAuthStore, withCredentials } from "./oauth-store.ts";

/**
 * The SDK's OAuthClientProvider over mcpproxy's token store: the SDK runs the MCP authorization
 * protocol (protected-resource and authorization-server discovery with the metadata `issuer`
 * checked, registration or a client metadata document URL, PKCE, the RFC 9207 `iss` check, scopes
 * from WWW-Authenticate and step-up, refresh); this decides where things are kept and what a login
 * looks like.
 *  - `login` (mcpproxy auth login): the authorization URL goes to `openAuthorizationUrl`, and the
 *    code comes back on a loopback redirect. Stored tokens are not used: a login always authorizes
 *    afresh, asking for the scope held before and the scope a refused call asked for too;
 *  - `serve` (and index, doctor): no person to ask. A server that needs a login makes the
 *    connection fail with UnauthorizedError, which the pool reports as `needs-login` instead of
 *    retrying; nothing is registered with the authorization server on the way. The scope it asked
 *    for is kept for the next login.
 * Credentials are read and written per authorization server issuer (the SDK passes it), so those of
 * one authorization server never reach another. Discovery is not cached between runs: a server that
 * moved to another authorization server is seen at its next 401, and needs a new login there.
 * An access token that expires within a minute is refreshed before it is sent, so a call does not
 * meet a 401 first.
 */
const REFRESH_MARGIN_MS = 60_000;

/** The default loopback redirect, used until a login registers another. */
export const DEFAULT_REDIRECT_URL = "http://127.0.0.1:33418/callback";

export interface OAuthProviderOptions {
  server: HttpServerConfig;
  store: OAuthStore;
  mode: "login" | "serve";
  /** The loopback redirect of this login (login mode). */
  redirectUrl?: string;
  /** Sends the user to the authorization URL (login mode). */
  openAuthorizationUrl?: (url: URL) => Promise<void> | void;
  /** Scope the login asks for beyond what the server names: what was held, what a refused call asked for. */
  extraScope?: string | undefined;
  now?: () => number;
}

export interface McpproxyOAuthProvider extends OAuthClientProvider {
  /** The `state` sent with the last authorization request, to check the redirect against. */
  readonly expectedState: string | undefined;
}

export function createOAuthProvider(options: OAuthProviderOptions): McpproxyOAuthProvider {
  const { server, store } = options;
  const now = options.now ?? Date.now;
  const configured = server.oauth || undefined;
  const isLogin = options.mode === "login";
  let codeVerifier: string | undefined;
  let expectedState: string | undefined;
  let refreshing: Promise<unknown> | undefined;
  /** The issuer the SDK last named: the one an invalidation is about. */
  let lastIssuer: string | undefined;
  /** Discovery made by this login, kept for its callback (the code belongs to that server). */
  let discovery: OAuthDiscoveryState | undefined;
  /** Whether this login saved tokens yet (before that, a login uses none). */
  let isLoggedIn = false;
  /** The tokens the SDK read before a refresh: a save over newer ones (a login since) is dropped. */
  let readTokens: StoredOAuthTokens | undefined;
  /** The scope the last authorization URL asked for (a login), for a token answer that names none. */
  let requestedScope: string | undefined;

  const redirectUrl = options.redirectUrl ?? registeredRedirect(store.load()) ?? DEFAULT_REDIRECT_URL;
  const issuerOf = (ctx: OAuthClientInformationContext | undefined, stamp?: string) => {
    if (ctx) lastIssuer = ctx.issuer;
    return ctx?.issuer ?? stamp ?? lastIssuer ?? store.load().current;
  };

  /** A stored registration still fit for this config and this login's redirect. */
  const isUsable = (client: StoredOAuthClientInformation) => {
    if (configured?.clientId) return client.client_id === configured.clientId;
    if (isUrlClientId(client.client_id)) return client.client_id === configured?.clientMetadataUrl;
    const redirects = (client as { redirect_uris?: string[] }).redirect_uris;
    return !isLogin || !redirects || redirects.includes(redirectUrl);
  };

  /**
   * The client registered by hand (oauth.clientId): bound to the first authorization server it is
   * used with, never offered to another. The binding is kept without the secret, which stays in
   * the config.
   */
  const configuredClient = (record: OAuthRecord, issuer: string | undefined) => {
    const clientId = configured?.clientId as string;
    const secret = configured?.clientSecret ? { client_secret: configured.clientSecret } : {};
    if (issuer === undefined) return { client_id: clientId, ...secret };
    const boundTo = Object.entries(record.issuers).find(
      ([other, credentials]) => other !== issuer && credentials.clientInformation?.client_id === clientId,
    )?.[0];
    if (boundTo !== undefined) {
      throw new ProxyError(
        "AUTH_FAILED",
        `${server.name} now uses the authorization server ${issuer}, and the oauth.clientId in the config was ` +
          `registered with ${boundTo}: mcpproxy does not send it to another authorization server. Register ` +
          "mcpproxy with the new one and put its client id in the config, or remove oauth.clientId to let mcpproxy register itself.",
      );
    }
    if (record.issuers[issuer]?.clientInformation?.client_id !== clientId) {
      store.update((current) =>
        withCredentials(current, issuer, (credentials) => ({
          ...credentials,
          clientInformation: { client_id: clientId, issuer },
        })),
      );
    }
    return { client_id: clientId, ...secret, issuer };
  };

  const provider: McpproxyOAuthProvider = {
    get redirectUrl() {
      return redirectUrl;
    },
    get expectedState() {
      return expectedState;
    },
    get clientMetadataUrl() {
      return configured?.clientMetadataUrl;
    },
    get clientMetadata(): OAuthClientMetadata {
      return {
        client_name: PRODUCT,
        redirect_uris: [redirectUrl],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        // A program on the user's machine with a loopback redirect (RFC 8252, SEP-837).
        application_type: "native",
        token_endpoint_auth_method: configured?.clientSecret ? "client_secret_basic" : "none",
        ...(configured?.scopes ? { scope: configured.scopes.join(" ") } : {}),
      };
    },
    state() {
      expectedState = randomBytes(16).toString("base64url");
      return expectedState;
    },
    clientInformation(ctx) {
      const issuer = issuerOf(ctx);
      const record = store.load();
      const stored = issuer === undefined ? undefined : record.issuers[issuer]?.clientInformation;
      if (stored && isUsable(stored)) {
        return configured?.clientSecret && stored.client_id === configured.clientId
          ? { ...stored, client_secret: configured.clientSecret }
          : stored;
      }
      if (configured?.clientId) return configuredClient(record, issuer);
      // Serving: registering a client now would be for a login nobody can finish.
      if (!isLogin) {
        const moved = issuer !== undefined && Object.keys(record.issuers).some((other) => other !== issuer);
        throw moved ? movedLogin(server, issuer) : needsLogin(server);
      }
      return undefined;
    },
    saveClientInformation(clientInformation, ctx) {
      const issuer = issuerOf(ctx, clientInformation.issuer);
      if (issuer === undefined) throw new Error("the SDK saved a client registration without its issuer");
      // A client registered by hand keeps its secret in the config only.
      const { client_secret: _secret, ...withoutSecret } = clientInformation as { client_secret?: string };
      const kept = clientInformation.client_id === configured?.clientId ? withoutSecret : clientInformation;
      store.update((record) =>
        withCredentials(record, issuer, (credentials) => ({
          ...credentials,
          clientInformation: kept as StoredOAuthClientInformation,
        })),
      );
    },
    async tokens(ctx) {
      // The transport's read (no ctx), before every request it sends, names no issuer: the current
      // credentials are sent, and the store is read once.
      const issuer = ctx ? issuerOf(ctx) : undefined;
      if (isLogin && !isLoggedIn) return undefined;
      const record = store.load();
      const credentials = ctx ? record.issuers[issuer as string] : currentCredentials(record);
      const expiresSoon =
        credentials?.expiresAt !== undefined &&
        credentials.expiresAt - now() < REFRESH_MARGIN_MS &&
        credentials.tokens?.refresh_token;
      // The transport's read (no ctx) refreshes ahead of expiry; auth()'s own read (with one) does not.
      if (!ctx && !isLogin && expiresSoon) {
        const refresh = () =>
          auth(provider, {
            serverUrl: server.url,
            ...(record.resourceMetadataUrl
              ? { resourceMetadataUrl: new URL(record.resourceMetadataUrl) }
              : {}),
          });
        const expiring = credentials?.tokens?.access_token;
        // A shared store's replicas refresh one at a time, and one that finds the token refreshed
        // by another meanwhile uses it: a rotated refresh token is spent after one use.
        refreshing ??= (
          store.refreshAlone
            ? store.refreshAlone(async () => {
                if (currentCredentials(store.load())?.tokens?.access_token === expiring) await refresh();
              })
            : refresh()
        )
          .catch(() => undefined) // a failed refresh shows as a 401, which runs auth() again
          .finally(() => {
            refreshing = undefined;
          });
        await refreshing;
        return currentCredentials(store.load())?.tokens;
      }
      if (ctx) readTokens = credentials?.tokens;
      return credentials?.tokens;
    },
    saveTokens(tokens, ctx) {
      const issuer = issuerOf(ctx, tokens.issuer);
      if (issuer === undefined) throw new Error("the SDK saved tokens without their issuer");
      const read = readTokens;
      readTokens = undefined;
      store.update((record) => {
        const stored = record.issuers[issuer]?.tokens;
        // Serving: a login (another process) saved tokens while this refresh ran; keep the login's.
        if (!isLogin && read && stored && stored.access_token !== read.access_token) return record;
        const expiresAt = tokens.expires_in !== undefined ? now() + tokens.expires_in * 1000 : undefined;
        // No `scope` in the answer means the scope asked for (RFC 6749 §5.1), or for a refresh the
        // one held: kept, so a later 403 for a scope the token holds is not taken for a step-up
        // (which would send the person to log in again, and again).
        const scope = tokens.scope ?? (isLogin ? requestedScope : stored?.scope);
        const saved = scope === undefined ? tokens : { ...tokens, scope };
        return {
          ...withCredentials(record, issuer, (c) => ({ ...c, tokens: saved, expiresAt })),
          current: issuer,
        };
      });
      if (isLogin) {
        isLoggedIn = true;
        // The callback it was kept for is done: the next 401 discovers afresh, so a server that
        // moved to another authorization server meanwhile is followed there.
        discovery = undefined;
      }
    },
    async redirectToAuthorization(url) {
      const asked = url.searchParams.get("scope") ?? undefined;
      if (!isLogin || !options.openAuthorizationUrl) {
        const held = currentCredentials(store.load())?.tokens?.scope;
        store.update((record) => ({ ...record, stepUpScope: computeScopeUnion(record.stepUpScope, asked) }));
        throw needsLogin(
          server,
          held !== undefined && isStrictScopeSuperset(asked, held) ? asked : undefined,
        );
      }
      const scope = computeScopeUnion(asked, options.extraScope);
      if (scope) url.searchParams.set("scope", scope);
      requestedScope = scope || undefined;
      await options.openAuthorizationUrl(url);
    },
    saveCodeVerifier(verifier) {
      codeVerifier = verifier;
    },
    codeVerifier() {
      if (!codeVerifier) throw new Error("no PKCE code verifier: the login was not started by this process");
      return codeVerifier;
    },
    invalidateCredentials(scope) {
      if (scope === "discovery" || scope === "all") discovery = undefined;
      store.update((record) => {
        const issuer = lastIssuer ?? record.current;
        switch (scope) {
          case "all": {
            if (issuer === undefined) return record;
            const { [issuer]: _dropped, ...issuers } = record.issuers;
            return { ...record, issuers, current: record.current === issuer ? undefined : record.current };
          }
          case "client":
            return issuer === undefined
              ? record
              : withCredentials(record, issuer, (c) => ({ ...c, clientInformation: undefined }));
          case "tokens":
            return issuer === undefined
              ? record
              : withCredentials(record, issuer, (c) => ({ ...c, tokens: undefined, expiresAt: undefined }));
          case "discovery":
            return { ...record, resourceMetadataUrl: undefined };
          default:
            return record;
        }
      });
    },
    saveDiscoveryState(state) {
      if (isLogin) discovery = state;
      if (state.resourceMetadataUrl && state.resourceMetadataUrl !== store.load().resourceMetadataUrl) {
        store.update((record) => ({ ...record, resourceMetadataUrl: state.resourceMetadataUrl }));
      }
    },
    discoveryState() {
      return discovery;
    },
  };
  return provider;
}

/** The redirect a stored registration was made with (the current authorization server's). */
export function registeredRedirect(record: OAuthRecord): string | undefined {
  const client = currentCredentials(record)?.clientInformation as { redirect_uris?: string[] } | undefined;
  return client?.redirect_uris?.[0];
}

/** A client id that is a client metadata document URL (SEP-991), not a registration. */
function isUrlClientId(clientId: string): boolean {
  return /^https:\/\//i.test(clientId);
}

/** Scope as RFC 6749 §3.3 spells it, to name in a message (it comes from the server). */
const SCOPE_TEXT = /^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/;

function needsLogin(server: HttpServerConfig, moreScope?: string): UnauthorizedError {
  const more =
    moreScope && moreScope.length <= 200 && SCOPE_TEXT.test(moreScope) ? ` (it asks for ${moreScope})` : "";
  return new UnauthorizedError(
    moreScope
      ? `${server.name} needs a login with more scope${more}: run \`mcpproxy auth login ${server.name}\``
      : `${server.name} needs a login (OAuth): run \`mcpproxy auth login ${server.name}\``,
  );
}

/** A server that moved to another authorization server: logging in there is a new registration. */
function movedLogin(server: HttpServerConfig, issuer: string): UnauthorizedError {
  return new UnauthorizedError(
    `${server.name} now uses another authorization server (${issuer}), which needs a login of its own: ` +
      `run \`mcpproxy auth login ${server.name}\``,
  );
}

/** Whether an error (or its causes) says the server needs a login. */
export function isLoginNeeded(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current instanceof UnauthorizedError) return true;
    current = current.cause;
  }
  return false;
}
