import { existsSync, readFileSync, realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { type ParseError, parse } from "jsonc-parser";
import { homeDir } from "../config/paths.ts";

/**
 * Where MCP clients keep their server lists, and how to read each: Claude Desktop, Claude Code
 * (user and project scopes), Cursor (global and project), VS Code (user mcp.json, settings.json
 * and the workspace's .vscode/mcp.json) and Windsurf, on macOS, Linux and Windows.
 */
export const CLIENT_IDS = ["claude-desktop", "claude-code", "cursor", "vscode", "windsurf"] as const;
export type ClientId = (typeof CLIENT_IDS)[number];

export const CLIENT_NAMES: Readonly<Record<ClientId, string>> = {
  "claude-desktop": "Claude Desktop",
  "claude-code": "Claude Code",
  cursor: "Cursor",
  vscode: "VS Code",
  windsurf: "Windsurf",
};

/** How a file lays out its servers. */
type Layout =
  | "mcpServers" // Claude Desktop, Cursor, Windsurf, .mcp.json: {"mcpServers": {…}}
  | "claude-json" // ~/.claude.json: user scope at the top, local scope under projects[dir]
  | "vscode-mcp" // .vscode/mcp.json and the user mcp.json: {"servers": {…}, "inputs": […]}
  | "vscode-settings"; // settings.json: {"mcp": {"servers": {…}, "inputs": […]}}

export interface ClientFile {
  client: ClientId | "file";
  path: string;
  scope: "user" | "project" | "file";
  layout: Layout;
  /**
   * The project a project file belongs to: its servers run there in their client (relative paths
   * such as `node ./server.js` and `${workspaceFolder}` mean this directory).
   */
  project?: string | undefined;
}

export interface Environment {
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  platform: NodeJS.Platform;
}

/** Every file a client may keep servers in, whether it exists or not. */
export function clientFiles(client: ClientId, { env, cwd, platform }: Environment): ClientFile[] {
  const home = homeDir(env);
  const appData =
    platform === "darwin"
      ? join(home, "Library", "Application Support")
      : platform === "win32"
        ? (env.APPDATA ?? join(home, "AppData", "Roaming"))
        : (env.XDG_CONFIG_HOME ?? join(home, ".config"));
  const user = (path: string, layout: Layout): ClientFile => ({ client, path, scope: "user", layout });
  const project = (path: string, layout: Layout): ClientFile => ({
    client,
    path,
    scope: "project",
    layout,
    project: cwd,
  });
  switch (client) {
    case "claude-desktop":
      return [user(join(appData, "Claude", "claude_desktop_config.json"), "mcpServers")];
    case "claude-code":
      return [user(join(home, ".claude.json"), "claude-json"), project(join(cwd, ".mcp.json"), "mcpServers")];
    case "cursor":
      return [
        user(join(home, ".cursor", "mcp.json"), "mcpServers"),
        project(join(cwd, ".cursor", "mcp.json"), "mcpServers"),
      ];
    case "vscode":
      return [
        user(join(appData, "Code", "User", "mcp.json"), "vscode-mcp"),
        user(join(appData, "Code", "User", "settings.json"), "vscode-settings"),
        project(join(cwd, ".vscode", "mcp.json"), "vscode-mcp"),
      ];
    case "windsurf":
      return [user(join(home, ".codeium", "windsurf", "mcp_config.json"), "mcpServers")];
  }
}

/**
 * A file named by the user: its layout is read off its contents. A project's own file (`.mcp.json`,
 * `.cursor/mcp.json`, `.vscode/mcp.json`) belongs to the project it sits in.
 */
export function namedFile(path: string): ClientFile {
  const dir = dirname(path);
  const project =
    basename(path) === ".mcp.json"
      ? dir
      : basename(path) === "mcp.json" && [".cursor", ".vscode"].includes(basename(dir))
        ? dirname(dir)
        : undefined;
  return { client: "file", path, scope: "file", layout: "mcpServers", ...(project ? { project } : {}) };
}

export interface RawServer {
  name: string;
  entry: Record<string, unknown>;
  /** The project it runs in (a project file's, or Claude Code's local scope of `cwd`). */
  project?: string | undefined;
}

export interface ReadResult {
  servers: RawServer[];
  /** VS Code's prompted inputs by id, with their descriptions. */
  inputs: Map<string, string>;
  problem?: string;
}

/** The servers a client file lists, as written (a file that does not parse is a problem, not a crash). */
export function readClientFile(file: ClientFile, cwd: string): ReadResult {
  const errors: ParseError[] = [];
  let data: unknown;
  try {
    data = parse(readFileSync(file.path, "utf8"), errors, { allowTrailingComma: true });
  } catch (error) {
    return { servers: [], inputs: new Map(), problem: `cannot be read: ${(error as Error).message}` };
  }
  if (errors.length > 0 || data === null || typeof data !== "object" || Array.isArray(data)) {
    return { servers: [], inputs: new Map(), problem: "is not valid JSON" };
  }
  const root = data as Record<string, unknown>;
  const maps: { map: unknown; project?: string | undefined }[] = [];
  let inputList: unknown;
  switch (file.layout) {
    case "claude-json": {
      maps.push({ map: root.mcpServers });
      const projects = root.projects as Record<string, { mcpServers?: unknown }> | undefined;
      maps.push({ map: projects?.[cwd]?.mcpServers, project: cwd });
      break;
    }
    case "vscode-settings": {
      const mcp = root.mcp as { servers?: unknown; inputs?: unknown } | undefined;
      maps.push({ map: mcp?.servers, project: file.project });
      inputList = mcp?.inputs;
      break;
    }
    default:
      // A named file may be any of the shapes: mcpServers, VS Code's servers, or a settings.json.
      maps.push({
        map: root.mcpServers ?? root.servers ?? (root.mcp as { servers?: unknown } | undefined)?.servers,
        project: file.project,
      });
      inputList = root.inputs ?? (root.mcp as { inputs?: unknown } | undefined)?.inputs;
  }
  const servers: RawServer[] = [];
  for (const { map, project } of maps) {
    if (map === null || typeof map !== "object" || Array.isArray(map)) continue;
    for (const [name, entry] of Object.entries(map)) {
      if (entry !== null && typeof entry === "object" && !Array.isArray(entry)) {
        servers.push({ name, entry: entry as Record<string, unknown>, ...(project ? { project } : {}) });
      }
    }
  }
  const inputs = new Map<string, string>();
  if (Array.isArray(inputList)) {
    for (const input of inputList as { id?: unknown; description?: unknown }[]) {
      if (typeof input?.id === "string")
        inputs.set(input.id, typeof input.description === "string" ? input.description : "");
    }
  }
  return { servers, inputs };
}

export function fileExists(file: ClientFile): boolean {
  return existsSync(file.path);
}

/**
 * The files that exist, each once: run from the home directory, a client's user file and its project
 * file are one file (`~/.cursor/mcp.json`), and a link may name another. The first is kept, so the
 * user scope wins: its servers are not a project's, whose directory would become their cwd.
 */
export function existingFiles(files: readonly ClientFile[]): ClientFile[] {
  const seen = new Set<string>();
  return files.filter((file) => {
    let real: string;
    try {
      real = realpathSync(file.path);
    } catch {
      return false;
    }
    if (seen.has(real)) return false;
    seen.add(real);
    return true;
  });
}
