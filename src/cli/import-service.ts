import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { homeDir } from "../config/paths.ts";
import { ProxyError } from "../errors.ts";
import {
  CLIENT_NAMES,
  type ClientFile,
  type ClientId,
  clientFiles,
  readClientFile,
} from "../import/client-configs.ts";
import { identityOf, isMcpproxyEntry, normalizeServer } from "../import/import-plan.ts";
import { TOKEN_FILE } from "../server/transport/bearer-token.ts";
import { readConfigServers, type ServerEdit, updateConfigServers } from "../store/config-writer.ts";
import { rememberedPort } from "../store/service-port.ts";
import type { CommandValues } from "./command.ts";
import { loadCommandConfig } from "./command-config.ts";

/**
 * `mcpproxy import --use-service`: the clients that take a URL (Cursor, Claude Code, VS Code) pointed
 * at the background service. In each one's user file the `mcpproxy` entry becomes the service's URL
 * with its token header, and the servers mcpproxy's config already has (the same command, arguments
 * and env, or URL and headers) are taken out of the client's list, which mcpproxy now serves for it;
 * the others stay. Each file is backed up first, and written readable by its owner alone: it holds
 * the token, which lets whoever reads it use the service.
 */
const URL_CLIENTS: readonly ClientId[] = ["cursor", "claude-code", "vscode"];

export async function pointClientsAtService(values: CommandValues): Promise<number> {
  const config = loadCommandConfig(values);
  const port = rememberedPort(config.dataDir);
  const tokenPath = join(config.dataDir, TOKEN_FILE);
  if (port === undefined || !existsSync(tokenPath))
    throw new ProxyError(
      "USAGE",
      "The background service has not run yet, so it has no URL: `mcpproxy start` first, then this again.",
    );
  const from = typeof values.from === "string" ? values.from : undefined;
  if (from !== undefined && !URL_CLIENTS.includes(from as ClientId))
    throw new ProxyError(
      "USAGE",
      `--use-service points the clients that take a URL: --from ${URL_CLIENTS.join(", ")}, not ${from}`,
    );
  const url = `http://127.0.0.1:${port}/mcp`;
  const token = readFileSync(tokenPath, "utf8").trim();
  const env = process.env;
  const home = homeDir(env);
  const show = (path: string) => (path.startsWith(`${home}/`) ? `~/${relative(home, path)}` : path);
  const served = new Set(Object.values(readConfigServers(config.configPath).servers).map(identityOf));
  const isDryRun = values["dry-run"] === true;
  const lines: string[] = [];
  for (const client of from ? [from as ClientId] : URL_CLIENTS) {
    const file = userFileOf(client);
    if (!file || !existsSync(file.path)) {
      lines.push(`  ${CLIENT_NAMES[client]}: no user config (${file ? show(file.path) : "none"}); skipped`);
      continue;
    }
    const read = readClientFile(file, process.cwd());
    if (read.problem) {
      lines.push(`  ${CLIENT_NAMES[client]}: ${show(file.path)} ${read.problem}; skipped`);
      continue;
    }
    const taken: string[] = [];
    const kept: string[] = [];
    // Claude Code's local-scope servers (under projects) stay: only the user scope is edited.
    for (const raw of read.servers.filter((server) => server.project === undefined)) {
      if (raw.name === "mcpproxy") continue;
      const found = normalizeServer(file, raw, read.inputs, home, env, port);
      const isServed = !("reason" in found) && served.has(identityOf(found.entry));
      if (isServed || isMcpproxyEntry(raw.entry, port)) taken.push(raw.name);
      else kept.push(raw.name);
    }
    const entry = {
      ...(client === "cursor" ? {} : { type: "http" }),
      url,
      headers: { Authorization: `Bearer ${token}` },
    };
    const edits: ServerEdit[] = [
      { name: "mcpproxy", entry },
      ...taken.map((name) => ({ name, entry: undefined })),
    ];
    const head = `  ${CLIENT_NAMES[client]} (${show(file.path)}): mcpproxy → ${url}`;
    const detail = [
      ...(taken.length > 0 ? [`    out of its list, served by mcpproxy now: ${taken.join(", ")}`] : []),
      ...(kept.length > 0
        ? [`    kept (not in mcpproxy's config; \`mcpproxy import\` adds them): ${kept.join(", ")}`]
        : []),
    ];
    if (isDryRun) {
      lines.push(head, ...detail);
      continue;
    }
    const { backup } = await updateConfigServers(file.path, () => edits, { backupAs: "dated" });
    lines.push(
      head,
      ...detail,
      `    backup: ${backup ? show(backup) : "none"}; the file is now readable by you alone (it holds the token)`,
    );
  }
  const out = [
    `${isDryRun ? "Would point" : "Pointed"} the clients that take a URL at the background service (${url}):`,
    ...lines,
    "",
    isDryRun
      ? "Dry run: nothing was changed."
      : "Restart those clients to pick it up. Clients that launch `mcpproxy serve` attach to the service by themselves.",
  ];
  process.stdout.write(`${out.join("\n")}\n`);
  return 0;
}

/** The client's user-wide file that lists servers by name (not VS Code's settings.json). */
function userFileOf(client: ClientId): ClientFile | undefined {
  return clientFiles(client, { env: process.env, cwd: process.cwd(), platform: process.platform }).find(
    (file) => file.scope === "user" && file.layout !== "vscode-settings",
  );
}
