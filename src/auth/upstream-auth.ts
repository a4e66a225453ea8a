import type { OAuthClientProvider } from "@modelcontextprotocol/client";
import type { HttpServerConfig, ServerConfig } from "../config/parse-server.ts";
import type { SharedOAuthRecords } from "../store/oauth-records.ts";
import { createOAuthProvider } from "./oauth-provider.ts";
import { currentCredentials, openOAuthStore } from "./oauth-store.ts";
import { sharedOAuthStore } from "./shared-oauth-store.ts";

/**
 * OAuth for the proxy's upstream connections (serve, index, doctor): which servers get it, and how
 * a `needs-login` server notices that `mcpproxy auth login` (another process) has finished: it
 * reads its stored tokens every second until they change. With a shared store (`shared`), the
 * logins are the store's (auth/shared-oauth-store.ts): one made on any machine serves every replica.
 */
export interface UpstreamAuth {
  providerFor(server: ServerConfig): OAuthClientProvider | undefined;
  /** Calls `onLogin` once the server's stored login changes; returns a function that stops watching. */
  watchLogin(server: ServerConfig, onLogin: () => void): () => void;
}

/** How often a server waiting for a login looks at its token file. */
const LOGIN_POLL_MS = 1_000;

/** OAuth applies to HTTP servers that do not send their own Authorization header and do not turn it off. */
export function usesOAuth(server: ServerConfig): server is HttpServerConfig {
  if (server.transport === "stdio" || server.oauth === false) return false;
  return !Object.keys(server.headers).some((header) => header.toLowerCase() === "authorization");
}

export function upstreamAuth(dataDir: string, shared?: SharedOAuthRecords): UpstreamAuth {
  const storeOf = (server: HttpServerConfig) =>
    shared
      ? sharedOAuthStore(shared, server.name, server.url)
      : openOAuthStore(dataDir, server.name, server.url);
  return {
    providerFor(server) {
      if (!usesOAuth(server)) return undefined;
      return createOAuthProvider({ server, store: storeOf(server), mode: "serve" });
    },
    watchLogin(server, onLogin) {
      if (!usesOAuth(server)) return () => undefined;
      const store = storeOf(server);
      // The tokens sent to the server, not the file: serving writes other things there too.
      const stamp = () => JSON.stringify(currentCredentials(store.load())?.tokens ?? null);
      const before = stamp();
      const timer = setInterval(() => {
        if (stamp() === before) return;
        clearInterval(timer);
        onLogin();
      }, LOGIN_POLL_MS);
      timer.unref?.();
      return () => clearInterval(timer);
    },
  };
}
