import { ProxyError } from "../errors.ts";
import type { CatalogTool, SearchFound } from "../index/catalog-types.ts";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import type { CallStats } from "../stats/call-record.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";
import type { ProfileSelector } from "./profile-selector.ts";

/**
 * What a profile's MCP server is handed instead of the whole catalog and pool: the same objects
 * seen through the profile's selector. Every handler (search, calls, dynamic registration,
 * federation, stats, upstream_servers) reads the catalog and the pool, so scoping them here scopes
 * all of them at once. A tool outside the profile is not found (a call of it says "No tool named",
 * as for a tool that does not exist); a server outside it is not configured, as far as it can tell.
 * The selector is asked anew each time, so servers added, removed or re-tagged count at once.
 */
/** How many times the limit a profile's search asks of the whole catalog first (and at least MIN_WIDE). */
const WIDENING = 8;
const MIN_WIDE = 50;

export function scopedCatalog(catalog: ToolCatalog, selector: () => ProfileSelector): ToolCatalog {
  const holds = (tool: CatalogTool | undefined) => (tool && selector().hasTool(tool) ? tool : undefined);
  const found = ({ hits, held }: SearchFound): SearchFound => {
    const shown = selector();
    return {
      hits: hits.filter((hit) => shown.hasTool(hit.tool)),
      held: held.filter((tool) => shown.hasTool(tool)),
    };
  };
  const cut = (result: SearchFound, limit: number): SearchFound => ({
    hits: result.hits.slice(0, limit),
    held: result.held.slice(0, Math.max(0, limit - Math.min(limit, result.hits.length))),
  });
  /**
   * Searched over the whole catalog, then narrowed, the limit applied after: first a few times the
   * limit, and when that leaves the profile short while more tools matched, every tool, so that the
   * profile's own best hits are never crowded out by stronger ones outside it.
   */
  const searchAllWithHeld = async (queries: readonly string[], limit: number, minScore?: number) => {
    const first = Math.min(Math.max(1, catalog.size()), Math.max(limit * WIDENING, MIN_WIDE));
    const narrowed = async (wanted: number) =>
      (await catalog.searchAllWithHeld(queries, wanted, minScore)).map((result) => ({
        isCut: result.hits.length + result.held.length >= wanted,
        found: found(result),
      }));
    let results = await narrowed(first);
    if (results.some(({ isCut, found }) => isCut && found.hits.length < limit))
      results = await narrowed(Math.max(first, catalog.size()));
    return results.map(({ found }) => cut(found, limit));
  };
  const names = (server?: string) => {
    const shown = selector();
    return catalog.names(server).filter((name) => {
      const tool = catalog.get(name);
      return tool !== undefined && shown.hasTool(tool);
    });
  };
  return {
    get recovered() {
      return catalog.recovered;
    },
    get capabilities() {
      return catalog.capabilities;
    },
    get eras() {
      return catalog.eras;
    },
    get instructions() {
      return catalog.instructions;
    },
    size: () => names().length,
    get: (name) => holds(catalog.get(name)),
    disabled: (name) => holds(catalog.disabled(name)),
    names,
    hasTools: (server) => selector().hasServer(server) && catalog.hasTools(server),
    definitionOf: (tool) => (holds(tool) ? catalog.definitionOf(tool) : undefined),
    shownHash: (tool) => catalog.shownHash(tool),
    setOverrides: (next) => catalog.setOverrides(next),
    isQuarantined: (tool) => catalog.isQuarantined(tool),
    quarantined: () => catalog.quarantined().filter((tool) => selector().hasTool(tool)),
    findings: () => catalog.findings().filter((finding) => selector().hasServer(finding.server)),
    approve: (tools) => catalog.approve(tools),
    syncServer: (server, tools) => catalog.syncServer(server, tools),
    removeServersExcept: (keep) => catalog.removeServersExcept(keep),
    forgetServersExcept: (keep) => catalog.forgetServersExcept(keep),
    search: async (query, limit, minScore) => (await searchAllWithHeld([query], limit, minScore))[0]!.hits,
    searchWithHeld: async (query, limit, minScore) => (await searchAllWithHeld([query], limit, minScore))[0]!,
    searchAllWithHeld,
    whenEmbedded: (options) => catalog.whenEmbedded(options),
    // The whole catalog's: a profile's view changes with it (and with the selector, which follows the config).
    version: () => catalog.version(),
    persist: () => catalog.persist(),
    loadIndex: () => catalog.loadIndex(),
    close: () => catalog.close(),
  };
}

/**
 * The pool as a profile sees it: its servers only; the others are "not in the configuration". A
 * server's tool count is the profile's share of it (`toolCount`), so tool patterns do not give
 * away how many tools it hides.
 */
export function scopedPool(
  pool: UpstreamPool,
  selector: () => ProfileSelector,
  toolCount: (server: string) => number,
): UpstreamPool {
  const mine = (server: string) => {
    if (!selector().hasServer(server))
      throw new ProxyError("UPSTREAM_UNAVAILABLE", `Server ${server} is not in the configuration.`);
    return server;
  };
  return {
    ...pool,
    callTool: (server, tool, args, options) => pool.callTool(mine(server), tool, args, options),
    forward: (server, method, params, options) => pool.forward(mine(server), method, params, options),
    request: (server, request, schema, options) => pool.request(mine(server), request, schema, options),
    live: () => pool.live().filter(({ server }) => selector().hasServer(server)),
    connecting: () => {
      const connecting = pool.connecting();
      return connecting.length === 0
        ? connecting
        : connecting.filter((server) => selector().hasServer(server));
    },
    connectServer: (server) => pool.connectServer(mine(server)),
    restart: (server) => pool.restart(mine(server)),
    status: () =>
      pool
        .status()
        .filter((status) => selector().hasServer(status.name))
        .map((status) => ({ ...status, toolCount: toolCount(status.name) })),
  };
}

/** Call figures of the profile's servers only (tools_stat); recording goes to the one store. */
export function scopedStats(stats: CallStats, selector: () => ProfileSelector): CallStats {
  return {
    ...stats,
    all: () => stats.all().filter((figures) => selector().hasServer(figures.server)),
    figuresOf: (tools) => stats.figuresOf(tools.filter((tool) => selector().hasServer(tool.server))),
    ofPrincipal: (principal) =>
      stats.ofPrincipal(principal).filter((figures) => selector().hasServer(figures.server)),
  };
}
