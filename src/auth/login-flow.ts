import type { HttpServerConfig } from "../config/parse-server.ts";
import { ProxyError } from "../errors.ts";
import { connectUpstream, httpTransport } from "../upstream/upstream-connection.ts";
import { createOAuthProvider, DEFAULT_REDIRECT_URL, isLoginNeeded } from "./oauth-provider.ts";
import { type OAuthStore, openOAuthStore } from "./oauth-store.ts";

/**
 * `mcpproxy auth login SERVER`: the OAuth authorization-code flow with PKCE, the code received
 * on a loopback redirect (http://127.0.0.1:PORT/callback, RFC 8252). mcpproxy connects to the
 * server as `serve` would; when the server refuses, the SDK reads the scope and metadata URL from
 * its WWW-Authenticate, discovers the authorization server, registers mcpproxy when needed and
 * builds the authorization URL, which `open` shows to the user. Ends with the server's tools listed
 * under the new token, so a login that "worked" but is refused is an error here, not in serve.
 */
export interface LoginOptions {
  server: HttpServerConfig;
  dataDir: string;
  /** Shows the authorization URL to the user (a browser, or the terminal). */
  open(url: URL): Promise<void> | void;
  /** How long to wait for the browser to come back. */
  timeoutMs?: number;
}

export const LOGIN_TIMEOUT_MS = 5 * 60_000;

export type LoginOutcome = "logged-in" | "no-login-needed";

export async function login(options: LoginOptions): Promise<LoginOutcome> {
  const { server } = options;
  const store = openOAuthStore(options.dataDir, server.name, server.url);
  const callback = startCallbackServer(portFor(store, server));
  try {
    const redirectUrl = `http://127.0.0.1:${callback.port}/callback`;
    // A registration made for another redirect port cannot take this one: register again.
    const registered = (store.load().clientInformation as { redirect_uris?: string[] } | undefined)
      ?.redirect_uris;
    store.update((record) => ({
      ...record,
      tokens: undefined,
      expiresAt: undefined,
      ...(registered && !registered.includes(redirectUrl) ? { clientInformation: undefined } : {}),
    }));
    let redirected = false;
    const provider = createOAuthProvider({
      server,
      store,
      mode: "login",
      redirectUrl,
      openAuthorizationUrl: async (url) => {
        redirected = true;
        await options.open(url);
      },
    });
    // Connects as serve would (initialize, then every tools/list page): whichever request the
    // server refuses names the scope, and the SDK's transport starts the authorization there.
    for (let round = 0; round < MAX_AUTHORIZATIONS; round++) {
      redirected = false;
      const transport = httpTransport(server, provider);
      try {
        const connection = await connectUpstream(server, { authProvider: provider, transport });
        await connection.close();
        return round === 0 ? "no-login-needed" : "logged-in";
      } catch (error) {
        if (!isLoginNeeded(error) || !redirected) throw error;
      }
      const { code, state } = await callback.code(options.timeoutMs ?? LOGIN_TIMEOUT_MS);
      if (provider.expectedState !== undefined && state !== provider.expectedState) {
        throw new ProxyError(
          "AUTH_FAILED",
          "the authorization response's state does not match this login; try again",
        );
      }
      await transport.finishAuth(code);
    }
    throw new ProxyError(
      "AUTH_FAILED",
      `${server.name} still refused the token after ${MAX_AUTHORIZATIONS} authorizations; check the scopes it asks for`,
    );
  } finally {
    callback.stop();
  }
}

/** Authorizations one login may go through (a server may ask for more scope at a later step). */
const MAX_AUTHORIZATIONS = 3;

/** The redirect port: the one a pre-registered client was registered with, else any free port. */
function portFor(store: OAuthStore, server: HttpServerConfig): number {
  const registered = (store.load().clientInformation as { redirect_uris?: string[] } | undefined)
    ?.redirect_uris?.[0];
  if (registered) return Number(new URL(registered).port) || 0;
  const configured = server.oauth || undefined;
  return configured?.clientId ? Number(new URL(DEFAULT_REDIRECT_URL).port) : 0;
}

const DONE_PAGE =
  "<!doctype html><title>mcpproxy</title><p>mcpproxy is logged in. You can close this tab and go back to the terminal.</p>";

function startCallbackServer(port: number) {
  let settle: ((result: { code: string; state: string | null } | Error) => void) | undefined;
  const received = new Promise<{ code: string; state: string | null } | Error>((resolve) => {
    settle = resolve;
  });
  const listener = Bun.serve({
    hostname: "127.0.0.1",
    port,
    fetch(request) {
      const url = new URL(request.url);
      if (url.pathname !== "/callback") return new Response("not found", { status: 404 });
      const code = url.searchParams.get("code");
      const error = url.searchParams.get("error");
      if (code) settle?.({ code, state: url.searchParams.get("state") });
      else
        settle?.(
          new ProxyError(
            "AUTH_FAILED",
            `the authorization server refused: ${error ?? "no code"}${url.searchParams.get("error_description") ? ` (${url.searchParams.get("error_description")})` : ""}`,
          ),
        );
      return new Response(code ? DONE_PAGE : "Login failed; see the terminal.", {
        headers: { "content-type": "text/html; charset=utf-8" },
      });
    },
  });
  return {
    port: listener.port as number,
    stop: () => listener.stop(true),
    async code(timeoutMs: number) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<Error>((resolve) => {
        timer = setTimeout(
          () =>
            resolve(new ProxyError("AUTH_FAILED", `no answer from the browser within ${timeoutMs / 1000} s`)),
          timeoutMs,
        );
      });
      const result = await Promise.race([received, timeout]);
      clearTimeout(timer);
      if (result instanceof Error) throw result;
      return result;
    },
  };
}
