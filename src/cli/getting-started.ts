import { existsSync } from "node:fs";
import { environmentDataDir, locateConfig } from "../config/paths.ts";
import { runningService } from "../service/find-service.ts";
import { readConfigServers } from "../store/config-writer.ts";
import { PRODUCT, VERSION } from "../version.ts";

const IMPORT: [string, string] = [
  "mcpproxy import",
  "bring in the servers of Claude Desktop, Claude Code, Cursor, VS Code",
];

/**
 * What `mcpproxy` alone prints on a terminal: where its config is, how many servers it has, and
 * the few commands to try next, instead of the full usage a script would want.
 */
export function gettingStarted(env: Readonly<Record<string, string | undefined>>, cwd: string): string {
  const { path } = locateConfig(undefined, env, cwd);
  let state: string;
  let next: [command: string, what: string][];
  if (!existsSync(path)) {
    state = `No config yet (it will be ${path}).`;
    next = [IMPORT];
  } else {
    let count: number | undefined;
    try {
      count = Object.keys(readConfigServers(path).servers).length;
    } catch {
      count = undefined;
    }
    state =
      count === undefined
        ? `Config: ${path} (it has problems: \`mcpproxy doctor\` names them).`
        : `Config: ${path}, ${count} server(s).`;
    next = count === 0 ? [IMPORT] : [];
  }
  // The data dir of the environment (a config's own dataDir is not read here: this stays quick).
  const dataDir = environmentDataDir(env, cwd);
  const service = existsSync(dataDir) ? runningService(dataDir) : undefined;
  state += service
    ? `\nThe background service runs at ${service.url} (pid ${service.pid}): every client's \`mcpproxy serve\` uses it.`
    : "";
  next.push(
    ["mcpproxy doctor", "check the config, each server and your clients, and say what to fix"],
    ["mcpproxy index", "start every server and index its tools"],
    ['mcpproxy search "..."', "find tools the way an agent does"],
    ["mcpproxy import --snippet", "the entry that points your MCP client at mcpproxy"],
  );
  if (!service) next.push(["mcpproxy start", "one mcpproxy in the background for all your clients"]);
  return [
    `${PRODUCT} ${VERSION}: one MCP server in front of many.`,
    "",
    state,
    "",
    "Try:",
    ...next.map(([command, what]) => `  ${command.padEnd(26)}${what}`),
    "",
    "All commands: mcpproxy --help",
    "",
  ].join("\n");
}
