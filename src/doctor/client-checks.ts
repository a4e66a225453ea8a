import { homeDir, locateConfig } from "../config/paths.ts";
import {
  CLIENT_IDS,
  CLIENT_NAMES,
  clientFiles,
  existingFiles,
  readClientFile,
} from "../import/client-configs.ts";
import { identityOf, isMcpproxyEntry, normalizeServer } from "../import/import-plan.ts";
import { readConfigServers } from "../store/config-writer.ts";
import type { ConfigCheckOptions } from "./config-checks.ts";
import type { Findings } from "./finding.ts";

/**
 * `doctor`'s check of the user's MCP clients (client-configs.ts): for each config file a client has,
 * whether it points at mcpproxy, and which of its own servers mcpproxy's config does not have yet
 * (the same command line or URL), with the `mcpproxy import` that brings them in.
 */

export function checkClients(
  options: Pick<ConfigCheckOptions, "configFlag" | "env" | "cwd">,
  findings: Findings,
  /** The background service's port: a client entry with its URL is mcpproxy. */
  servicePort?: number,
): void {
  const environment = { env: options.env, cwd: options.cwd, platform: process.platform };
  let imported = new Set<string>();
  try {
    const configPath = locateConfig(options.configFlag, options.env, options.cwd).path;
    imported = new Set(Object.values(readConfigServers(configPath).servers).map(identityOf));
  } catch {
    // A config that does not read is reported by checkConfig.
  }
  for (const client of CLIENT_IDS) {
    for (const file of existingFiles(clientFiles(client, environment))) {
      const read = readClientFile(file, options.cwd);
      const subject = `${CLIENT_NAMES[client]}${file.scope === "project" ? " (project)" : ""}`;
      if (read.problem) {
        findings.push({ area: "client", subject, status: "warn", detail: `${file.path} ${read.problem}` });
        continue;
      }
      if (read.servers.length === 0) continue;
      const usesProxy = read.servers.some(({ entry }) => isMcpproxyEntry(entry, servicePort));
      const own = read.servers.length - (usesProxy ? 1 : 0);
      if (usesProxy && own === 0) {
        findings.push({ area: "client", subject, status: "ok", detail: `${file.path} uses mcpproxy` });
        continue;
      }
      // Its servers that mcpproxy's config does not have yet (the same command line or URL).
      const notImported = read.servers.filter((raw) => {
        const server = normalizeServer(
          file,
          raw,
          read.inputs,
          homeDir(options.env),
          options.env,
          servicePort,
        );
        return "entry" in server && !imported.has(identityOf(server.entry));
      });
      findings.push({
        area: "client",
        subject,
        status: "info",
        detail:
          `${file.path} ${usesProxy ? "uses mcpproxy and also" : "does not use mcpproxy; it"} lists ${own} server(s) of its own` +
          (notImported.length === 0
            ? ", all of them in mcpproxy's config already"
            : `, ${notImported.length} not imported`),
        fix:
          notImported.length === 0
            ? "replace them with the entry `mcpproxy import --snippet` prints"
            : `\`mcpproxy import --from ${client}\`, then \`mcpproxy import --snippet\` for the entry that replaces them`,
      });
    }
  }
}
