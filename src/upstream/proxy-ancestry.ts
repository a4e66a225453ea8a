import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { ProxyError } from "../errors.ts";

/**
 * Keeps a proxy from starting itself as its own upstream. A config that lists `mcpproxy serve`
 * with the same config (directly, or through a chain of other proxies) would otherwise fork
 * proxies without bound. Every proxy hands its children the identities of the configs above it
 * and its own, in an environment variable (stdio) or a header (HTTP); a proxy that finds its own
 * identity there, or a chain deeper than MAX_PROXY_DEPTH, refuses to start with a message that
 * begins with PROXY_LOOP_MARKER, and the proxy above marks that server failed for good.
 * Chaining to a proxy with a different config stays allowed.
 */
export const ANCESTRY_ENV = "MCPPROXY_ANCESTRY";
export const ANCESTRY_HEADER = "mcpproxy-ancestry";
const MAX_PROXY_DEPTH = 8;
const PROXY_LOOP_MARKER = "Proxy loop:";

export interface Ancestry {
  /** This proxy's identity: a hash of its config file's real path. */
  self: string;
  /** The identities above this proxy, outermost first. */
  above: readonly string[];
  /** What this proxy passes to its own upstreams: `above` and `self`. */
  forChildren: string;
}

function configIdentity(configPath: string): string {
  let path = configPath;
  try {
    path = realpathSync(configPath);
  } catch {
    // A config that cannot be resolved is reported by the loader; its path still identifies it.
  }
  return createHash("sha256").update(path).digest("hex").slice(0, 16);
}

export function parseAncestry(value: string | null | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((part) => part.trim())
    .filter((part) => /^[0-9a-f]{16}$/.test(part));
}

/** Throws PROXY_LOOP when this config already runs above us or the chain is too deep. */
export function resolveAncestry(
  configPath: string,
  env: Readonly<Record<string, string | undefined>>,
): Ancestry {
  const self = configIdentity(configPath);
  const above = parseAncestry(env[ANCESTRY_ENV]);
  const failure = loopProblem(self, above, configPath);
  if (failure) throw new ProxyError("PROXY_LOOP", failure);
  return { self, above, forChildren: [...above, self].join(",") };
}

/** Why a proxy with identity `self` must not serve a caller whose chain is `above`, if it must not. */
export function loopProblem(self: string, above: readonly string[], configPath: string): string | undefined {
  if (above.includes(self)) {
    return (
      `${PROXY_LOOP_MARKER} mcpproxy with the config ${configPath} is already running ${above.length - above.indexOf(self)} ` +
      "level(s) up the chain that started this one. A proxy cannot be its own upstream: remove this server from the config that lists it."
    );
  }
  if (above.length >= MAX_PROXY_DEPTH) {
    return (
      `${PROXY_LOOP_MARKER} ${above.length} proxies are already chained above this one (at most ${MAX_PROXY_DEPTH}). ` +
      "Check the configs for proxies that list each other."
    );
  }
  return undefined;
}

export function isProxyLoopFailure(text: string | undefined): boolean {
  return text?.includes(PROXY_LOOP_MARKER) ?? false;
}
