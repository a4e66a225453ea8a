import { randomBytes } from "node:crypto";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthTokens,
} from "@modelcontextprotocol/client";
import { auth, UnauthorizedError } from "@modelcontextprotocol/client";
import type { HttpServerConfig } from "../config/parse-server.ts";
import { PRODUCT } from "../version.ts";
import type { OAuthStore } from "./oauth-store.ts";

/**
 * The SDK's OAuthClientProvider over mcpproxy's token store: the SDK runs the MCP authorization
 * protocol (protected-resource and authorization-server discovery, dynamic registration, PKCE,
 * scopes from WWW-Authenticate and step-up, refresh); this decides where things are kept and what
 * a login looks like.
 *  - `login` (mcpproxy auth login): the authorization URL goes to `openAuthorizationUrl`, and the
 *    code comes back on a loopback redirect;
 *  - `serve` (and index, doctor): no person to ask. A server that needs a login makes the
 *    connection fail with UnauthorizedError, which the pool reports as `needs-login` instead of
 *    retrying; nothing is registered with the authorization server on the way.
 * An access token that expires within a minute (a quarter of its life, for short-lived ones) is
 * refreshed before it is sent, so a call does not meet a 401 first.
 */
export const REFRESH_MARGIN_MS = 60_000;

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
  let codeVerifier: string | undefined;
  let expectedState: string | undefined;
  let refreshing: Promise<unknown> | undefined;

  const registeredRedirect = () => {
    const info = store.load().clientInformation as { redirect_uris?: string[] } | undefined;
    return info?.redirect_uris?.[0];
  };
  const redirectUrl = options.redirectUrl ?? registeredRedirect() ?? DEFAULT_REDIRECT_URL;

  const provider: McpproxyOAuthProvider = {
    get redirectUrl() {
      return redirectUrl;
    },
    get expectedState() {
      return expectedState;
    },
    get clientMetadata(): OAuthClientMetadata {
      return {
        client_name: PRODUCT,
        redirect_uris: [redirectUrl],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: configured?.clientSecret ? "client_secret_basic" : "none",
        ...(configured?.scopes ? { scope: configured.scopes.join(" ") } : {}),
      };
    },
    state() {
      expectedState = randomBytes(16).toString("base64url");
      return expectedState;
    },
    clientInformation(): OAuthClientInformationMixed | undefined {
      const stored = store.load().clientInformation;
      if (stored) return stored;
      if (configured?.clientId) {
        return {
          client_id: configured.clientId,
          ...(configured.clientSecret ? { client_secret: configured.clientSecret } : {}),
        };
      }
      // Serving: registering a client now would be for a login nobody can finish.
      if (options.mode === "serve") throw needsLogin(server);
      return undefined;
    },
    saveClientInformation(clientInformation) {
      store.update((record) => ({ ...record, clientInformation }));
    },
    async tokens(): Promise<OAuthTokens | undefined> {
      const record = store.load();
      const expiresSoon =
        record.expiresAt !== undefined &&
        record.expiresAt - now() < REFRESH_MARGIN_MS &&
        record.tokens?.refresh_token;
      if (expiresSoon && !refreshing) {
        // auth() reads tokens() itself: `refreshing` makes that inner read return the stored ones.
        refreshing = auth(provider, { serverUrl: server.url })
          .catch(() => undefined) // a failed refresh shows as a 401, which runs auth() again
          .finally(() => {
            refreshing = undefined;
          });
        await refreshing;
        return store.load().tokens;
      }
      return record.tokens;
    },
    saveTokens(tokens) {
      store.update((record) => ({
        ...record,
        tokens,
        ...(tokens.expires_in !== undefined
          ? { expiresAt: now() + tokens.expires_in * 1000 }
          : { expiresAt: undefined }),
      }));
    },
    async redirectToAuthorization(url) {
      if (options.mode === "serve" || !options.openAuthorizationUrl) throw needsLogin(server);
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
      store.update((record) => {
        switch (scope) {
          case "all":
            return { serverUrl: record.serverUrl };
          case "client":
            return { ...record, clientInformation: undefined };
          case "tokens":
            return { ...record, tokens: undefined, expiresAt: undefined };
          case "discovery":
            return { ...record, discoveryState: undefined };
          default:
            return record;
        }
      });
    },
    saveDiscoveryState(state) {
      store.update((record) => ({ ...record, discoveryState: state }));
    },
    discoveryState() {
      return store.load().discoveryState;
    },
  };
  return provider;
}

export function needsLogin(server: HttpServerConfig): UnauthorizedError {
  return new UnauthorizedError(
    `${server.name} needs a login (OAuth): run \`mcpproxy auth login ${server.name}\``,
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
