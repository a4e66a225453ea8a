import { renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describeError, isProxyError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { CATALOG_FILE, type CatalogStore, openCatalogStore } from "../store/sqlite/catalog-store.ts";

export interface RecoveryOptions {
  dataDir: string;
  readOnly: boolean;
  approvalsWritable: boolean;
  /** The saved index, removed with a damaged catalog (it is rebuilt from the catalog). */
  snapshotFile: string;
  logger: Logger;
}

/**
 * The catalog store; one that is damaged is set aside (kept for a post-mortem, as
 * catalog.db.damaged-TIME) and a new one started, with a warning: the index is rebuilt from the
 * servers. Read-only (search), a damaged catalog is an error that says to run `mcpproxy index`.
 */
export function openOrRebuildStore(options: RecoveryOptions): { store: CatalogStore; recovered?: string } {
  const { dataDir, readOnly } = options;
  try {
    return { store: openCatalogStore(dataDir, { readOnly, approvalsWritable: options.approvalsWritable }) };
  } catch (error) {
    if (readOnly || !isProxyError(error) || error.code !== "INDEX_UNREADABLE") throw error;
    const aside = join(dataDir, `${CATALOG_FILE}.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}`);
    renameSync(join(dataDir, CATALOG_FILE), aside);
    for (const file of [`${CATALOG_FILE}-wal`, `${CATALOG_FILE}-shm`, options.snapshotFile]) {
      rmSync(join(dataDir, file), { force: true });
    }
    const recovered =
      `The tool catalog was damaged (${describeError(error.cause)}); it was set aside as ${aside} ` +
      "and the index is rebuilt from the servers.";
    options.logger.warn(recovered);
    return { store: openCatalogStore(dataDir, { readOnly }), recovered };
  }
}
