import type { ResolvedConfig } from "../config/load-config.ts";
import type { ServerConfig } from "../config/parse-server.ts";
import type { Logger } from "../log.ts";
import { currentSelector, profileDeps } from "../profiles/profile-deps.ts";
import { profileWarnings } from "../profiles/profile-selector.ts";
import type { StatusSources } from "../server/observe/status-page.ts";
import type { ProxyServerDeps } from "../server/proxy-deps.ts";
import { createProxyServer } from "../server/proxy-server.ts";
import { retrieveRankedAll } from "../server/tools/ranked-retrieve.ts";
import type { ProfileEndpoint } from "../server/transport/http-app.ts";
import type { ListenAdmission } from "../server/transport/listen-admission.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
import { healthReport } from "./health.ts";

/** The status page's sources over these deps: the whole proxy's, or a profile's. */
export function statusSources(scope: ProxyServerDeps, config: ResolvedConfig): StatusSources {
  return {
    servers: () => scope.pool.status(),
    indexedTools: () => scope.catalog.size(),
    stats: scope.observe?.stats ? () => scope.observe!.stats!.all() : undefined,
    search: async (query) =>
      (
        await retrieveRankedAll(scope.catalog, scope.plugins, [query], {
          topK: config.topK,
          minScore: config.minScore,
          prior: scope.search.prior,
          rerank: scope.search.rerank,
          isAdaptive: config.adaptiveTopK,
        })
      )[0]!,
  };
}

/**
 * What `serve` needs of `mcpproxy.profiles`: each profile's deps (for `serve --profile` over
 * stdio) and its HTTP endpoint. Profiles are read at start (one added or changed in the file takes
 * a restart); which servers they hold follows the servers as they change. What a profile names
 * that no server answers to is said once, as a warning (profile-selector.ts says why).
 */
export function servedProfiles(options: {
  config: ResolvedConfig;
  deps: ProxyServerDeps;
  servers: () => readonly ServerConfig[];
  listensOver: (pool: UpstreamPool) => ListenAdmission;
  logger: Logger;
}) {
  const { config, deps } = options;
  for (const [name, profile] of Object.entries(config.profiles))
    for (const warning of profileWarnings(name, profile, config.servers)) options.logger.warn(warning);
  const depsOf = (name: string) =>
    profileDeps(deps, currentSelector(config.profiles[name]!, options.servers));
  return {
    depsOf,
    endpoints: () =>
      new Map(
        Object.keys(config.profiles).map((name): [string, ProfileEndpoint] => {
          const scope = depsOf(name);
          return [
            name,
            {
              createServer: (era, audience) => createProxyServer(scope, era, audience),
              listens: options.listensOver(scope.pool),
              status: statusSources(scope, config),
              health: () => healthReport(scope.catalog, scope.pool),
            },
          ];
        }),
      ),
  };
}
