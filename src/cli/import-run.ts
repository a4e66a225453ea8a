import { existsSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { environmentDataDir, homeDir, locateConfig } from "../config/paths.ts";
import { ProxyError } from "../errors.ts";
import {
  CLIENT_IDS,
  CLIENT_NAMES,
  type ClientFile,
  type ClientId,
  clientFiles,
  existingFiles,
  fileExists,
  namedFile,
  readClientFile,
} from "../import/client-configs.ts";
import {
  type FoundServer,
  normalizeServer,
  type PlannedAction,
  planImport,
  type Skipped,
} from "../import/import-plan.ts";
import { profileList } from "../profiles/profile-deps.ts";
import { isTokenRequired, TOKEN_FILE } from "../server/transport/bearer-token.ts";
import { readConfigServers, updateConfigServers } from "../store/config-writer.ts";
import { rememberedPort } from "../store/service-port.ts";
import type { CommandValues } from "./command.ts";
import { loadCommandConfig } from "./command-config.ts";
import { type SnippetOptions, snippet } from "./import-snippet.ts";

/** `mcpproxy import`: what it does once its flags are parsed (its flags and help: import-command.ts). */
export async function runImportCommand(values: CommandValues, _positionals: string[]): Promise<number> {
  const env = process.env;
  const cwd = process.cwd();
  const configPath = locateConfig(values.config as string | undefined, env, cwd).path;
  const profile = typeof values.profile === "string" ? values.profile : undefined;
  if (profile !== undefined && !values.snippet)
    throw new ProxyError("USAGE", "--profile goes with --snippet: it prints the client entry of a profile");
  if (values["use-service"]) {
    // Loaded only here: it reads the service's port and token.
    return (await import("./import-service.ts")).pointClientsAtService(values);
  }
  if (values.snippet) {
    const isExplicitConfig = values.config !== undefined || env.MCPPROXY_CONFIG_PATH !== undefined;
    const service = serviceOf(values, configPath);
    if (profile === undefined) {
      process.stdout.write(snippet({ configPath, isExplicitConfig, service }));
      return 0;
    }
    const config = loadCommandConfig(values);
    if (!Object.hasOwn(config.profiles, profile))
      throw new ProxyError(
        "USAGE",
        `--profile ${profile}: no such profile in ${configPath}; the profiles are ${profileList(config.profiles)}`,
      );
    // A wildcard bind is reached on loopback from this machine.
    const bound = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
    const host = bound.includes(":") ? `[${bound}]` : bound;
    process.stdout.write(
      snippet({
        configPath,
        isExplicitConfig,
        service,
        profile: {
          name: profile,
          url: `http://${host}:${config.port}/mcp/p/${profile}`,
          // With access tokens (mcpproxy.httpAuth) the client logs in at the issuer: no token file.
          token:
            !config.httpAuth && isTokenRequired(config.host, config.requireToken)
              ? join(config.dataDir, TOKEN_FILE)
              : undefined,
        },
      }),
    );
    return 0;
  }
  const files = filesToRead(values.from as string | undefined, cwd);
  const home = homeDir(env);
  // A client already pointed at the background service lists its URL: that entry is mcpproxy itself.
  const servicePort = rememberedPort(dataDirOf(values, configPath));
  const show = (path: string) => (path.startsWith(`${home}/`) ? `~/${relative(home, path)}` : path);
  const found: FoundServer[] = [];
  const skipped: Skipped[] = [];
  const lines: string[] = [];
  for (const file of existingFiles(files)) {
    const read = readClientFile(file, cwd);
    const label =
      file.client === "file"
        ? "file"
        : `${CLIENT_NAMES[file.client]}${file.scope === "project" ? " (project)" : ""}`;
    if (read.problem) {
      lines.push(`  ${label}: ${show(file.path)} ${read.problem}; skipped`);
      continue;
    }
    lines.push(
      `  ${label}: ${show(file.path)}: ${read.servers.length === 0 ? "no servers" : read.servers.map((s) => s.name).join(", ")}`,
    );
    for (const raw of read.servers) {
      const result = normalizeServer(file, raw, read.inputs, home, env, servicePort);
      if ("reason" in result) skipped.push(result);
      else found.push(result);
    }
  }
  if (lines.length === 0) {
    process.stdout.write(
      `No MCP client config was found. Looked in:\n${files.map((file) => `  ${show(file.path)}`).join("\n")}\n` +
        "Name a file with --from FILE, or add servers to the config by hand.\n",
    );
    return 0;
  }
  const describePlan = (actions: readonly PlannedAction[]) => {
    const out = [
      `Found ${found.length + skipped.length} server(s):`,
      ...lines,
      "",
      `Into ${show(configPath)}:`,
    ];
    for (const action of actions) {
      const from = clientLabel(action.server.file);
      if (action.kind === "skip") {
        out.push(`  skip  ${action.server.name} (${from}): already there as ${action.sameAs}`);
        continue;
      }
      out.push(`  add   ${action.as} (${from}): ${describe(action.server.entry)}${whyOwn(action)}`);
      for (const note of action.server.notes) out.push(`        note: ${note}`);
    }
    for (const skip of skipped) out.push(`  skip  ${skip.name} (${clientLabel(skip.file)}): ${skip.reason}`);
    return out;
  };
  const additionsOf = (actions: readonly PlannedAction[]) =>
    actions.flatMap((action) => (action.kind === "add" ? [action] : []));
  let actions = planImport(readConfigServers(configPath).servers, found);
  if (additionsOf(actions).length === 0 || values["dry-run"]) {
    const out = describePlan(actions);
    const count = additionsOf(actions).length;
    out.push(
      "",
      count === 0
        ? "Nothing to add."
        : `Dry run: nothing was changed. Run without --dry-run to add ${count} server(s).`,
    );
    process.stdout.write(`${out.join("\n")}\n`);
    return 0;
  }
  // Planned again from the file as the edit finds it (another edit may have landed since).
  const { backup } = await updateConfigServers(
    configPath,
    (current) => {
      actions = planImport(current.servers, found);
      return additionsOf(actions).map((action) => ({ name: action.as, entry: action.server.entry }));
    },
    { backupAs: "dated" },
  );
  const out = describePlan(actions);
  out.push(
    "",
    `Added ${additionsOf(actions).length} server(s) to ${show(configPath)}${backup ? ` (the previous file is kept as ${show(backup)})` : ""}.`,
    "Next: `mcpproxy doctor` checks that each one starts; `mcpproxy index` indexes their tools;",
    "`mcpproxy import --snippet` shows how to point your client at mcpproxy instead.",
  );
  process.stdout.write(`${out.join("\n")}\n`);
  return 0;
}

function filesToRead(from: string | undefined, cwd: string): ClientFile[] {
  const environment = { env: process.env, cwd, platform: process.platform };
  if (from === undefined) return CLIENT_IDS.flatMap((client) => clientFiles(client, environment));
  if ((CLIENT_IDS as readonly string[]).includes(from)) return clientFiles(from as ClientId, environment);
  const file = namedFile(resolve(cwd, from));
  if (!fileExists(file)) {
    throw new ProxyError(
      "USAGE",
      `--from ${from}: no such client or file. Clients: ${CLIENT_IDS.join(", ")}; or the path of a config file.`,
    );
  }
  return [file];
}

/**
 * Why an added server has the name it has, or is a server of its own beside one that runs the same
 * thing: the user learns of the second `memory` and of the variables that make it another server.
 */
function whyOwn(action: Extract<PlannedAction, { kind: "add" }>): string {
  const { renamedFrom, differsFrom } = action;
  if (differsFrom) {
    const what =
      differsFrom.given === "env"
        ? "runs the same command with a different env"
        : "has the same URL with different headers";
    const keys = differsFrom.keys.length > 0 ? ` (${differsFrom.keys.join(", ")})` : "";
    return renamedFrom === differsFrom.name
      ? ` (the name ${renamedFrom} is taken: ${differsFrom.name} ${what}${keys}, so this is a server of its own)`
      : ` (${differsFrom.name} ${what}${keys}: this is a server of its own${renamedFrom ? `; the name ${renamedFrom} is taken` : ""})`;
  }
  return renamedFrom ? ` (the name ${renamedFrom} is taken by a different server)` : "";
}

/** The background service's URL (once a start chose its port) and token file, for the snippet. */
function serviceOf(values: CommandValues, configPath: string): SnippetOptions["service"] {
  const dataDir = dataDirOf(values, configPath);
  const port = rememberedPort(dataDir);
  return {
    url: port !== undefined ? `http://127.0.0.1:${port}/mcp` : undefined,
    tokenPath: join(dataDir, TOKEN_FILE),
  };
}

/** The data dir import's config names, or the environment's; read only when the config exists (import creates nothing before it writes). */
function dataDirOf(values: CommandValues, configPath: string): string {
  if (existsSync(configPath)) return loadCommandConfig(values).dataDir;
  return environmentDataDir(process.env, process.cwd());
}

function clientLabel(file: ClientFile): string {
  return file.client === "file" ? basename(file.path) : CLIENT_NAMES[file.client];
}

function describe(entry: Record<string, unknown>): string {
  if (typeof entry.url === "string") return entry.url;
  const args = Array.isArray(entry.args) ? entry.args.map(String) : [];
  return [String(entry.command), ...args].join(" ");
}
