import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomicSync } from "../atomic-file.ts";

/**
 * The port of the background service (src/service/), chosen free once and kept in
 * `<dataDir>/service-port`, so that the URL a client was given stays true from one start to the
 * next. Here, below the service, because import and doctor must know that URL too: a client entry
 * that names it is mcpproxy itself, not a server to import (import/import-plan.ts).
 */
const PORT_FILE = "service-port";

export function rememberedPort(dataDir: string): number | undefined {
  const path = join(dataDir, PORT_FILE);
  if (!existsSync(path)) return undefined;
  const port = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
  return Number.isInteger(port) && port > 0 && port < 65_536 ? port : undefined;
}

export function rememberPort(dataDir: string, port: number): void {
  writeFileAtomicSync(join(dataDir, PORT_FILE), `${port}\n`);
}
