import type { ServerConfig } from "../config/parse-server.ts";
import type { Profiles } from "../config/profile-settings.ts";
import type { ProxyServerDeps } from "../server/proxy-deps.ts";
import { createProfileSelector, type ProfileSelector } from "./profile-selector.ts";
import { scopedCatalog, scopedPool, scopedStats } from "./scoped-views.ts";

/** A profile's selector over the servers as they stand now, built again only when they change. */
export function currentSelector(
  profile: Profiles[string],
  servers: () => readonly ServerConfig[],
): () => ProfileSelector {
  let seen: readonly ServerConfig[] | undefined;
  let selector: ProfileSelector | undefined;
  return () => {
    const now = servers();
    if (!selector || now !== seen) {
      seen = now;
      selector = createProfileSelector(profile, now);
    }
    return selector;
  };
}

/**
 * The deps of a profile's MCP server: the catalog, pool and statistics seen through the profile, and
 * `upstream_servers` list-only (a profile is a narrowed view: changing the servers from it would
 * reach past what it shows).
 */
export function profileDeps(deps: ProxyServerDeps, selector: () => ProfileSelector): ProxyServerDeps {
  const catalog = scopedCatalog(deps.catalog, selector);
  return {
    ...deps,
    catalog,
    pool: scopedPool(deps.pool, selector, (server) => catalog.names(server).length),
    observe: deps.observe && {
      ...deps.observe,
      stats: deps.observe.stats ? scopedStats(deps.observe.stats, selector) : undefined,
    },
    servers: deps.servers ? { ...deps.servers, readOnly: true } : undefined,
  };
}

/** "a, b" or "none": the profiles a person can pick from, for error messages. */
export function profileList(profiles: Profiles): string {
  const names = Object.keys(profiles);
  return names.length > 0 ? names.join(", ") : "none (mcpproxy.profiles is empty)";
}
