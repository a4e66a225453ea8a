import { openCatalog } from "../app/open-catalog.ts";
import { reviewJson } from "../approvals/launch-review.ts";
import type { ResolvedConfig } from "../config/load-config.ts";
import { locateConfig } from "../config/paths.ts";
import { configTextWithServers } from "../config/registry-text.ts";
import { isProxyError, ProxyError } from "../errors.ts";
import { escapeUnshown } from "../security/hidden-characters.ts";
import { maskUrl } from "../security/mask-url.ts";
import { redactSecrets } from "../security/redact-secrets.ts";
import { editsFor, quarantinedByServer } from "../server/tools/upstream-servers-tool.ts";
import { readConfigServers, type ServerEdit, updateConfigServers } from "../store/config-writer.ts";
import { type ServerRegistry, serverRegistryOf } from "../store/server-registry.ts";
import type { SharedStore } from "../store/shared-store.ts";
import type { CommandValues } from "./command.ts";
import { commandLogger, loadCommandConfig } from "./command-config.ts";
import {
  commandEditor,
  configFileText,
  registryConfig,
  storeOverrides,
  withCommandStore,
} from "./command-store.ts";

/** `mcpproxy servers`: what it does once its flags are parsed (its flags and help: servers-command.ts). */
export async function runServersCommand(values: CommandValues, positionals: string[]): Promise<number> {
  const [operation = "list", name, ...command] = positionals;
  const overrides = storeOverrides(values);
  const given = operation === "list" ? undefined : entryOf(values, command);
  // Said in the command line's words, before anything is read or created (the agent's tool has its own).
  const problem = usageProblem(operation, name, given !== undefined);
  if (problem) throw new ProxyError("USAGE", problem);
  // Loading creates ~/.mcpproxy/mcp_config.json on a first run: that empty file is no previous one to back up.
  const isNewFile = locateConfig(values.config as string | undefined, process.env, process.cwd()).mustCreate;
  const config = loadCommandConfig(values, overrides);
  return withCommandStore(config, async (store) => {
    const load = (text: string) => loadCommandConfig(values, overrides, text);
    const registry = store ? serverRegistryOf(store) : undefined;
    if (operation === "list") {
      const listed = registry ? await registryConfig(registry, config, load) : undefined;
      return list(listed?.config ?? config, Boolean(values.json), listed?.entries);
    }
    const plan = (current: Record<string, Record<string, unknown>>) =>
      editsFor({ operation, name, server: given?.entry }, current, "person");
    // Checked before it is written: a change that would not load never reaches the file or the store.
    const check = (text: string) => checkedEdit(() => load(text), name, given?.source);
    const { edits, after, where } =
      store && registry
        ? await editRegistry(store, registry, config, plan, check)
        : await editFile(config, plan, check, isNewFile);
    report(operation, edits, after, where);
    return 0;
  });
}

interface EditOutcome {
  edits: readonly ServerEdit[];
  after: ResolvedConfig | undefined;
  /** Where it was written, and who applies it, as said to the person. */
  where: string;
}

type Plan = (current: Record<string, Record<string, unknown>>) => readonly ServerEdit[];

async function editFile(
  config: ResolvedConfig,
  plan: Plan,
  check: (text: string) => ResolvedConfig,
  isNewFile: boolean,
): Promise<EditOutcome> {
  let after: ResolvedConfig | undefined;
  const { edits, backup, conflicts } = await updateConfigServers(
    config.configPath,
    (current) => plan(current.servers),
    {
      backupAs: isNewFile ? "none" : "rolling",
      validate: (text) => {
        after = check(text);
      },
    },
  );
  for (const copy of conflicts) {
    process.stderr.write(
      `mcpproxy: two saves of the config raced this edit: the one not kept is in ${copy}\n`,
    );
  }
  return {
    edits,
    after,
    where:
      `in ${config.configPath}${backup ? ` (the previous file is ${backup})` : isNewFile ? " (a new file)" : ""}. ` +
      "A running mcpproxy applies it now; otherwise run `mcpproxy index`.",
  };
}

async function editRegistry(
  store: SharedStore,
  registry: ServerRegistry,
  config: ResolvedConfig,
  plan: Plan,
  check: (text: string) => ResolvedConfig,
): Promise<EditOutcome> {
  let after: ResolvedConfig | undefined;
  const fileText = configFileText(config);
  const { edits } = await registry.edit(plan, {
    by: commandEditor("servers"),
    validate: (servers) => {
      after = check(configTextWithServers(fileText, servers));
    },
  });
  return { edits, after, where: `in the shared store ${store.shown}. Every running replica applies it now.` };
}

function report(
  operation: string,
  edits: readonly ServerEdit[],
  after: ResolvedConfig | undefined,
  where: string,
): void {
  // An entry an agent wrote stays the agent's: a change to what it runs needs an approval again.
  const held = (after?.servers ?? []).filter(
    (server) => server.awaitingApproval && edits.some((edit) => edit.name === server.name),
  );
  process.stdout.write(
    `${operation === "add" ? "Added" : operation === "remove" ? "Removed" : operation === "update" ? "Updated" : operation === "enable" ? "Enabled" : "Disabled"} ` +
      `${edits.map((edit) => edit.name).join(", ")} ${where}\n` +
      held
        .map(
          (server) =>
            `${server.name} was written by an agent: it runs once you approve it (\`mcpproxy approve ${server.name}\`).\n`,
        )
        .join(""),
  );
}

const OPERATIONS = ["list", "add", "update", "remove", "enable", "disable"];

/**
 * What is missing from the command line for `operation`, in its own words (flags and positions),
 * not those of the agent's `upstream_servers` tool (`name`, `server`), which plans the edit after.
 */
function usageProblem(operation: string, name: string | undefined, hasEntry: boolean): string | undefined {
  if (!OPERATIONS.includes(operation))
    return `servers: no operation ${operation}; the operations are ${OPERATIONS.join(", ")}.`;
  if (operation === "add" && (!name || !hasEntry)) {
    return (
      `servers add needs ${name ? "what the server is" : "a NAME and what the server is"}: ` +
      `mcpproxy servers add ${name ?? "NAME"} --url URL | --entry JSON | -- COMMAND [ARGS…] ` +
      `(e.g. mcpproxy servers add ${name ?? "memory"} -- npx -y @modelcontextprotocol/server-memory).`
    );
  }
  if (operation === "update" && (!name || !hasEntry)) {
    return `servers update needs ${name ? "" : "a NAME and "}the fields to change: mcpproxy servers update ${name ?? "NAME"} --entry JSON (e.g. --entry '{"args": ["--verbose"]}').`;
  }
  if (operation !== "list" && !name)
    return `servers ${operation} needs a NAME: mcpproxy servers ${operation} NAME.`;
  return undefined;
}

/** Where the entry came from on the command line, to blame that rather than the file. */
type EntrySource = "--entry" | "--url" | "the command after --";

function entryOf(
  values: Record<string, string | boolean | undefined>,
  command: string[],
): { entry: Record<string, unknown>; source: EntrySource } | undefined {
  if (typeof values.entry === "string") {
    let entry: unknown;
    try {
      entry = JSON.parse(values.entry);
    } catch (error) {
      throw new ProxyError("USAGE", `--entry is not JSON: ${String(error)}`);
    }
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
      throw new ProxyError(
        "USAGE",
        `--entry must be a JSON object (a server's config entry), such as '{"command": "uvx", "args": ["x"]}' or '{"url": "https://host/mcp"}'`,
      );
    }
    return { entry: entry as Record<string, unknown>, source: "--entry" };
  }
  if (typeof values.url === "string") return { entry: { url: values.url }, source: "--url" };
  const [executable, ...args] = command;
  return executable ? { entry: { command: executable, args }, source: "the command after --" } : undefined;
}

/**
 * Loads the config as it would be after the edit. Problems in the entry the command line gave are
 * the argument's, and said so: the file is not written and was not at fault.
 */
function checkedEdit(
  load: () => ResolvedConfig,
  name: string | undefined,
  source: EntrySource | undefined,
): ResolvedConfig {
  try {
    return load();
  } catch (error) {
    if (!isProxyError(error) || error.code !== "CONFIG_INVALID" || !source || !name) throw error;
    const inEntry = (detail: string) =>
      ["mcpServers", "servers"].some(
        (section) => detail.startsWith(`${section}.${name}.`) || detail.startsWith(`${section}.${name}:`),
      );
    const own = error.details.filter(inEntry);
    if (own.length === 0 || own.length < error.details.length) throw error;
    throw new ProxyError(
      "USAGE",
      `${source} is not a valid server entry for ${name} (${own.length} problem${own.length === 1 ? "" : "s"}); nothing was changed.`,
      { details: own },
    );
  }
}

async function list(
  config: ResolvedConfig,
  json: boolean,
  stored: Record<string, Record<string, unknown>> | undefined,
): Promise<number> {
  const catalog = await openCatalog(config, commandLogger(config), { readOnly: true });
  // What the file (or the registry) says (`${VAR}` as written), not the expanded values: those may be secrets.
  const entries = stored ?? readConfigServers(config.configPath).servers;
  try {
    const quarantined = quarantinedByServer(catalog);
    const rows = config.servers.map((server) => ({
      name: server.name,
      enabled: server.enabled,
      ...(server.awaitingApproval ? { awaitingApproval: true } : {}),
      ...(server.enabled && server.configProblem ? { notStarted: server.configProblem } : {}),
      transport: server.transport,
      target: targetOf(entries[server.name] ?? {}),
      toolsIndexed: catalog.names(server.name).length,
      quarantinedTools: quarantined.get(server.name) ?? 0,
    }));
    if (json) {
      process.stdout.write(`${reviewJson({ servers: rows })}\n`);
      return 0;
    }
    if (rows.length === 0) {
      process.stdout.write(
        `No servers in ${stored ? "the shared store" : config.configPath}: add one with \`mcpproxy servers add\` or \`mcpproxy import\`.\n`,
      );
      return 0;
    }
    for (const row of rows) {
      const held = row.awaitingApproval
        ? `(awaiting approval: mcpproxy approve ${row.name}) `
        : row.notStarted
          ? "(not started: a variable it needs is not set; see mcpproxy doctor) "
          : "";
      process.stdout.write(
        `${row.name}  ${row.enabled ? "" : "(disabled) "}${held}${row.transport}  ${row.toolsIndexed} tools indexed` +
          `${row.quarantinedTools > 0 ? `, ${row.quarantinedTools} quarantined (mcpproxy approve ${row.name})` : ""}\n    ${row.target}\n`,
      );
    }
    return 0;
  } finally {
    await catalog.close();
  }
}

/**
 * The command line or URL of a raw entry, with what could be a secret in a URL masked and what
 * would not show as itself escaped (launch-review.ts: an agent's entry waits for approval).
 */
function targetOf(entry: Record<string, unknown>): string {
  if (typeof entry.command === "string") {
    const args = Array.isArray(entry.args) ? entry.args.map(String) : [];
    return escapeUnshown(redactSecrets([entry.command, ...args].join(" ")));
  }
  return escapeUnshown(maskUrl(String(entry.url ?? entry.serverUrl ?? "")));
}
