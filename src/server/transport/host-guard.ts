import type { MiddlewareHandler } from "hono";

/**
 * DNS-rebinding guard. A web page the user visits can resolve its own domain to 127.0.0.1 and
 * then talk to a local server; its requests still carry the attacker's Host and Origin. Only
 * loopback names (and the host the proxy was told to bind) are accepted in either header.
 */
const LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1"] as const;
const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]"]);

/**
 * What a refused Host or Origin is told: what passes, and the one setting that widens it (the bind
 * address), so that a person reaching the proxy by a new name knows what to change.
 */
const HOW_TO_ALLOW =
  "Only loopback names (127.0.0.1, localhost, [::1]) and the address the proxy binds are accepted " +
  "(DNS-rebinding protection): to reach it by another name, bind that address with " +
  "`mcpproxy serve --host ADDRESS` (MCPPROXY_HOST, or mcpproxy.host in the config file), or " +
  "--host 0.0.0.0 for any name (a bearer token is then required, and an Origin must match the Host)";

export interface HostGuardOptions {
  /** The host the listener is bound to (MCPPROXY_HOST). */
  bindHost: string;
}

/** Whether a bind address is reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.toLowerCase().replace(/^\[|\]$/g, "");
  return bare === "localhost" || bare === "::1" || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

function isWildcardHost(host: string): boolean {
  return WILDCARD_HOSTS.has(host);
}

/** The hostname part of a Host header or an origin URL, lowercased, brackets kept for IPv6. */
function hostnameOf(hostHeader: string): string {
  const value = hostHeader.trim().toLowerCase();
  if (value.startsWith("[")) return value.slice(0, value.indexOf("]") + 1);
  const colon = value.lastIndexOf(":");
  return colon === -1 ? value : value.slice(0, colon);
}

export function hostGuard(options: HostGuardOptions): MiddlewareHandler {
  const allowed = new Set<string>(LOOPBACK_HOSTS);
  const bind = options.bindHost.toLowerCase();
  allowed.add(bind.includes(":") && !bind.startsWith("[") ? `[${bind}]` : bind);
  // Bound to every interface on purpose: the user chose to be reachable by any name.
  const checksHost = !isWildcardHost(bind);

  const isAllowedOrigin = (origin: string, host: string | undefined) => {
    let originHost: string;
    try {
      originHost = hostnameOf(new URL(origin).host);
    } catch {
      return false; // "null" (sandboxed frames, file://) and garbage
    }
    if (allowed.has(originHost)) return true;
    // On a wildcard bind, a page served by this very host name is same-origin.
    return !checksHost && host !== undefined && hostnameOf(host) === originHost;
  };

  return async (c, next) => {
    const host = c.req.header("host");
    if (checksHost && (!host || !allowed.has(hostnameOf(host)))) {
      return c.json({ error: `Forbidden: Host ${host ?? "(none)"} is not allowed. ${HOW_TO_ALLOW}` }, 403);
    }
    const origin = c.req.header("origin");
    if (origin !== undefined && !isAllowedOrigin(origin, host)) {
      return c.json({ error: `Forbidden: Origin ${origin} is not allowed. ${HOW_TO_ALLOW}` }, 403);
    }
    await next();
  };
}
