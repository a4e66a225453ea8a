import type { ToolCatalog } from "../index/tool-catalog.ts";

/**
 * The catalog a `serve` hands to everything it builds, with the catalog behind it replaceable: a
 * serve that started beside another one reads the saved index without writing, and when the other
 * exits it opens the catalog for writing and puts it here, while its sessions go on. A catalog
 * replaced stays open until the serve closes (a search may still be reading it).
 */
export interface CatalogHandle extends ToolCatalog {
  replace(next: ToolCatalog): void;
}

export function createCatalogHandle(first: ToolCatalog): CatalogHandle {
  let current = first;
  const replaced: ToolCatalog[] = [];
  return {
    get recovered() {
      return current.recovered;
    },
    get capabilities() {
      return current.capabilities;
    },
    // Stable for the pool that holds it, whichever catalog is current.
    eras: {
      get: (server) => current.eras?.get(server),
      put: (server, verdict) => current.eras?.put(server, verdict),
      forgetExcept: (keep) => current.eras?.forgetExcept(keep),
    },
    instructions: {
      get: (server) => current.instructions?.get(server),
      all: () => current.instructions?.all() ?? new Map(),
      put: (server, text) => current.instructions?.put(server, text) ?? false,
      forgetExcept: (keep) => current.instructions?.forgetExcept(keep),
    },
    size: () => current.size(),
    get: (name) => current.get(name),
    names: (server) => current.names(server),
    hasTools: (server) => current.hasTools(server),
    disabled: (name) => current.disabled(name),
    definitionOf: (tool) => current.definitionOf(tool),
    shownHash: (tool) => current.shownHash(tool),
    setOverrides: (next) => current.setOverrides(next),
    isQuarantined: (tool) => current.isQuarantined(tool),
    quarantined: () => current.quarantined(),
    findings: () => current.findings(),
    approve: (tools) => current.approve(tools),
    syncServer: (server, tools) => current.syncServer(server, tools),
    removeServersExcept: (keep) => current.removeServersExcept(keep),
    forgetServersExcept: (keep) => current.forgetServersExcept(keep),
    search: (query, limit, minScore) => current.search(query, limit, minScore),
    searchWithHeld: (query, limit, minScore) => current.searchWithHeld(query, limit, minScore),
    searchAllWithHeld: (queries, limit, minScore) => current.searchAllWithHeld(queries, limit, minScore),
    whenEmbedded: (options) => current.whenEmbedded(options),
    persist: () => current.persist(),
    loadIndex: () => current.loadIndex(),
    // Another catalog is another history: its version is told apart by how many came before it.
    version: () => `${replaced.length}/${current.version()}`,
    replace(next) {
      replaced.push(current);
      current = next;
    },
    async close() {
      for (const catalog of [...replaced, current]) await catalog.close();
    },
  };
}
