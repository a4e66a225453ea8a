import { computeScopeUnion } from "@modelcontextprotocol/client";
import type { HttpServerConfig } from "../config/parse-server.ts";
import { ProxyError } from "../errors.ts";
import { tryLoginLock } from "../store/sqlite/login-lock.ts";
import { connectUpstream } from "../upstream/upstream-connection.ts";
import { httpTransport } from "../upstream/upstream-transport.ts";
import { loginFailure } from "./login-errors.ts";
import {
  createOAuthProvider,
  DEFAULT_REDIRECT_URL,
  isLoginNeeded,
  registeredRedirect,
} from "./oauth-provider.ts";
import {
  currentCredentials,
  type OAuthRecord,
  type OAuthStore,
  oauthFileNameOf,
  openOAuthStore,
} from "./oauth-store.ts";

/**
 * `mcpproxy auth login SERVER`: the OAuth authorization-code flow with PKCE, the code received
 * on a loopback redirect (http://127.0.0.1:PORT/callback, RFC 8252). mcpproxy connects to the
 * server as `serve` would; when the server refuses, the SDK reads the scope and metadata URL from
 * its WWW-Authenticate, discovers the authorization server, registers mcpproxy when needed and
 * builds the authorization URL, which `open` shows to the user. The whole redirect goes back to the
 * SDK once its `state` is checked here, so its `iss` is checked too (RFC 9207). Ends with the
 * server's tools listed under the new token, so a login that "worked" but is refused is an error
 * here, not in serve.
 *
 * One login per server at a time (a second one says so); one at a time on a fixed callback port (a
 * second one waits for it); logins of servers on ephemeral ports run side by side.
 */
export interface LoginOptions {
  server: HttpServerConfig;
  dataDir: string;
  /** Shows the authorization URL to the user (a browser, or the terminal). */
  open(url: URL): Promise<void> | void;
  /** Tells the user why the login waits before it starts (another login holds its callback port). */
  notify?(message: string): void;
  /** How long to wait for the browser to come back. */
  timeoutMs?: number;
  /** Where the login is kept: the data dir's file unless given (a shared store's record). */
  store?: OAuthStore | undefined;
}

const LOGIN_TIMEOUT_MS = 5 * 60_000;

export type LoginOutcome = "logged-in" | "no-login-needed";

export async function login(options: LoginOptions): Promise<LoginOutcome> {
  const { server, dataDir } = options;
  const timeoutMs = options.timeoutMs ?? LOGIN_TIMEOUT_MS;
  const lock = tryLoginLock(dataDir, oauthFileNameOf(server.name));
  if (!lock) {
    throw new ProxyError(
      "AUTH_FAILED",
      `A login to ${server.name} is already running (another \`mcpproxy auth login ${server.name}\`): ` +
        "finish it in the browser, or wait for it to end, then try again if it failed.",
    );
  }
  try {
    const store = options.store ?? openOAuthStore(dataDir, server.name, server.url);
    const before = store.load();
    const callback = await startCallback(before, server, timeoutMs, options);
    try {
      return await authorize(options, store, before, callback, timeoutMs);
    } finally {
      callback.stop();
    }
  } finally {
    lock.release();
  }
}

async function authorize(
  options: LoginOptions,
  store: OAuthStore,
  before: OAuthRecord,
  callback: CallbackServer,
  timeoutMs: number,
): Promise<LoginOutcome> {
  const { server } = options;
  let redirected = false;
  let authorizations = 0;
  const tooMany = () =>
    new ProxyError(
      "AUTH_FAILED",
      `${server.name} still refused the token after ${MAX_AUTHORIZATIONS} authorizations; check the scopes it asks for`,
    );
  const provider = createOAuthProvider({
    server,
    store,
    mode: "login",
    redirectUrl: `http://127.0.0.1:${callback.port}/callback`,
    // Step-up (SEP-2350): the scope held before and what a refused call asked for, with what the
    // server names now, so the new token loses nothing the old one had.
    extraScope: computeScopeUnion(currentCredentials(before)?.tokens?.scope, before.stepUpScope),
    openAuthorizationUrl: async (url) => {
      // The bound counts the authorizations a person goes through, whatever asks for them.
      if (authorizations >= MAX_AUTHORIZATIONS) throw tooMany();
      authorizations++;
      redirected = true;
      callback.expect();
      await options.open(url);
    },
  });
  // Connects as serve would (initialize, then every tools/list page): whichever request the
  // server refuses names the scope, and the SDK's transport starts the authorization there. The
  // token of the last authorization is tried too; a refusal then ends the login.
  for (let round = 0; ; round++) {
    redirected = false;
    const transport = httpTransport(server, provider);
    try {
      const connection = await connectUpstream(server, { authProvider: provider, transport });
      await connection.close();
      if (round === 0) return "no-login-needed";
      store.update((record) => ({ ...record, stepUpScope: undefined }));
      return "logged-in";
    } catch (error) {
      if (authorizations >= MAX_AUTHORIZATIONS && !redirected) throw tooMany();
      if (!isLoginNeeded(error) || !redirected) throw loginFailure(server, error) ?? error;
    }
    const response = await callback.response(timeoutMs);
    // Checked before anything else is read: an answer to another login (or forged) says nothing.
    if (provider.expectedState === undefined || response.get("state") !== provider.expectedState) {
      throw new ProxyError(
        "AUTH_FAILED",
        "The authorization response's state does not match this login: it was not used. Try again.",
      );
    }
    try {
      // The whole query: the SDK checks `iss` before it reads the code or an error (RFC 9207).
      await transport.finishAuth(response);
    } catch (error) {
      throw loginFailure(server, error) ?? error;
    }
  }
}

/** Authorizations one login may go through (a server may ask for more scope at a later step). */
const MAX_AUTHORIZATIONS = 3;

/**
 * The loopback listener of this login. Its port is the one the stored registration was made with
 * (no new registration needed), else the fixed default for a client registered by hand or a client
 * metadata document, else any free port. A fixed port that another login holds is waited for (in
 * this data dir or another); a registration's port that something else holds gives way to a free
 * port and a new registration.
 */
async function startCallback(
  record: OAuthRecord,
  server: HttpServerConfig,
  timeoutMs: number,
  options: LoginOptions,
): Promise<CallbackServer> {
  const configured = server.oauth || undefined;
  const isFixed = Boolean(configured?.clientId || configured?.clientMetadataUrl);
  const registered = registeredRedirect(record);
  const port = registered
    ? Number(new URL(registered).port) || 0
    : isFixed
      ? Number(new URL(DEFAULT_REDIRECT_URL).port)
      : 0;
  const deadline = Date.now() + timeoutMs;
  for (let told = false; ; told = true) {
    try {
      return startCallbackServer(port);
    } catch (error) {
      if ((error as { code?: string }).code !== "EADDRINUSE") throw error;
      if (!isFixed) return startCallbackServer(0);
      if (Date.now() > deadline) {
        throw new ProxyError(
          "AUTH_FAILED",
          `The callback port ${port} (the redirect ${server.name}'s client is registered with) stayed taken for ` +
            `${timeoutMs / 1000} s. Finish the other login using it, or close the program that holds it, and try again.`,
          { cause: error },
        );
      }
      if (!told) {
        options.notify?.(
          `The callback port ${port} is in use (another mcpproxy login?): waiting for it to be free...`,
        );
      }
      await Bun.sleep(PORT_POLL_MS);
    }
  }
}

const PORT_POLL_MS = 200;

const DONE_PAGE =
  "<!doctype html><title>mcpproxy</title><p>mcpproxy is logged in. You can close this tab and go back to the terminal.</p>";

interface CallbackServer {
  port: number;
  stop(): void;
  /** Forgets any earlier redirect: an authorization request is about to go out. */
  expect(): void;
  /** The query of the redirect to /callback since `expect`, whatever it holds (the caller judges it). */
  response(timeoutMs: number): Promise<URLSearchParams>;
}

function startCallbackServer(port: number): CallbackServer {
  // The browser may come back before the login waits for it: the last redirect is kept.
  let arrived: URLSearchParams | undefined;
  let waiting: ((query: URLSearchParams) => void) | undefined;
  const listener = Bun.serve({
    hostname: "127.0.0.1",
    port,
    fetch(request) {
      const url = new URL(request.url);
      if (url.pathname !== "/callback") return new Response("not found", { status: 404 });
      if (waiting) waiting(url.searchParams);
      else arrived = url.searchParams;
      waiting = undefined;
      return new Response(url.searchParams.has("code") ? DONE_PAGE : "Login failed; see the terminal.", {
        headers: { "content-type": "text/html; charset=utf-8" },
      });
    },
  });
  return {
    port: listener.port as number,
    stop: () => listener.stop(true),
    expect() {
      arrived = undefined;
    },
    async response(timeoutMs: number) {
      if (arrived) {
        const query = arrived;
        arrived = undefined;
        return query;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        return await new Promise<URLSearchParams>((resolve, reject) => {
          waiting = resolve;
          timer = setTimeout(() => {
            waiting = undefined;
            reject(new ProxyError("AUTH_FAILED", `no answer from the browser within ${timeoutMs / 1000} s`));
          }, timeoutMs);
        });
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
