import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MODELS_DIR } from "../config/paths.ts";
import type { Logger } from "../log.ts";
import { openLocalCopy } from "./local-copy.ts";
import { pullCatalog, startCatalogReplica } from "./postgres/catalog-replica.ts";
import type { SharedStore } from "./shared-store.ts";

/**
 * Runs a command that reads and writes the data dir's catalog (`approve`) against the shared
 * store when one is open: the catalog is brought up to date from the store first, the command runs
 * as it does on one machine, and what it wrote is pushed before it returns, so every replica
 * applies it. Without a store, it only runs the command.
 */
export async function withCatalogCopy<T>(
  store: SharedStore | undefined,
  dataDir: string,
  logger: Logger,
  run: () => Promise<T>,
): Promise<T> {
  if (!store) return run();
  const copy = openLocalCopy(dataDir);
  try {
    const replica = await startCatalogReplica(store, copy, logger);
    try {
      return await run();
    } finally {
      await replica.stop();
    }
  } finally {
    copy.close();
  }
}

/**
 * Runs a command that only reads the catalog (`search`, `tools`) against the shared store's: the
 * store's rows are copied into a data dir of the moment, `run` reads them there, and the copy is
 * deleted. Nothing goes back to the store, and the person's own data dir is left as it was (a
 * machine's single-user catalog is not replaced by the team's); only its downloaded embedding
 * models are used, so the query is embedded without a second download.
 */
export async function withCatalogSnapshot<T>(
  store: SharedStore,
  dataDir: string,
  run: (snapshotDir: string) => Promise<T>,
): Promise<T> {
  const snapshotDir = mkdtempSync(join(tmpdir(), "mcpproxy-store-catalog-"));
  try {
    const copy = openLocalCopy(snapshotDir);
    try {
      await pullCatalog(store, copy);
    } finally {
      copy.close();
    }
    const models = join(dataDir, MODELS_DIR);
    if (existsSync(models)) symlinkSync(models, join(snapshotDir, MODELS_DIR));
    return await run(snapshotDir);
  } finally {
    rmSync(snapshotDir, { recursive: true, force: true });
  }
}
