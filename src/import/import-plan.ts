import { basename, isAbsolute, resolve } from "node:path";
import { SERVER_KEYS } from "../config/parse-server.ts";
import { canonicalJson } from "../security/canonical-json.ts";
import { usableServerName } from "../security/server-names.ts";
import type { ClientFile, RawServer } from "./client-configs.ts";

/**
 * Turns the servers found in clients' files into entries of mcpproxy's config, and plans how
 * they join the servers it has: a server already there (the same command, arguments and env, or
 * the same URL and headers) is skipped, a name already taken by a different server gets the
 * client's name as a suffix, and `${VAR}` references are kept as written.
 */
export interface FoundServer {
  file: ClientFile;
  name: string;
  /** The entry as mcpproxy's config will hold it. */
  entry: Record<string, unknown>;
  /** What the user must know or do (an input to set, a key left behind). */
  notes: string[];
}

export interface Skipped {
  file: ClientFile;
  name: string;
  reason: string;
}

/** Keys other clients write that mean nothing here or are folded into the entry. */
const FOLDED: ReadonlySet<string> = new Set(["type", "transport", "serverUrl", "disabled", "enabled"]);
/** Server keys carried over as they are; anything else a client wrote is named in a note and left behind. */
const CARRIED: readonly string[] = SERVER_KEYS.filter((key) => !FOLDED.has(key));

export function normalizeServer(
  file: ClientFile,
  raw: RawServer,
  inputs: ReadonlyMap<string, string>,
  home: string,
  /** The environment import runs in: a variable not set in it gets a note. */
  env: Readonly<Record<string, string | undefined>>,
  /** The background service's port, when it has one: an entry with its URL is mcpproxy itself. */
  servicePort?: number,
): FoundServer | Skipped {
  const source = raw.entry;
  const notes: string[] = [];
  const entry: Record<string, unknown> = {};
  for (const key of CARRIED) if (source[key] !== undefined) entry[key] = source[key];
  if (entry.url === undefined && typeof source.serverUrl === "string") entry.url = source.serverUrl;
  if (source.disabled === true || source.enabled === false) entry.enabled = false;
  const declared = source.transport ?? source.type;
  if (
    declared === "sse" &&
    typeof entry.url === "string" &&
    !/\/sse\/?$/.test(new URL(entry.url, "http://x").pathname)
  ) {
    entry.transport = "sse";
  }
  const hasCommand = typeof entry.command === "string" && entry.command !== "";
  const hasUrl = typeof entry.url === "string" && entry.url !== "";
  if (hasCommand === hasUrl) {
    return {
      file,
      name: raw.name,
      reason: hasCommand ? "it has both a command and a url" : "it has no command or url",
    };
  }
  if (isMcpproxyEntry(entry, servicePort)) {
    return { file, name: raw.name, reason: "it is mcpproxy itself" };
  }
  if (typeof source.envFile === "string") {
    notes.push(
      `its envFile ${source.envFile} is not read by mcpproxy: put those variables in "env" or the environment`,
    );
  }
  const leftBehind = Object.keys(source).filter(
    (key) => !CARRIED.includes(key) && !FOLDED.has(key) && key !== "envFile",
  );
  if (leftBehind.length > 0) notes.push(`left behind: ${leftBehind.join(", ")} (not mcpproxy settings)`);
  const project = raw.project ?? file.project;
  const rewritten = rewriteVariables(entry, inputs, project, home, notes, env) as Record<string, unknown>;
  // A project's server runs in the project in its client (`node ./server.js`): here too.
  if (hasCommand && project) {
    const cwd = rewritten.cwd;
    if (cwd === undefined) rewritten.cwd = project;
    else if (typeof cwd === "string" && !isAbsolute(cwd) && !/^[~$]/.test(cwd))
      rewritten.cwd = resolve(project, cwd);
  }
  return { file, name: raw.name, entry: rewritten, notes };
}

/**
 * VS Code's variables become mcpproxy's: `${env:X}` is `${X}`, `${input:id}` is an environment
 * variable the user sets (named after the input), `${workspaceFolder}` is the project directory
 * and `${userHome}` the home directory. Plain `${VAR}` stays as written. Each variable the server
 * will need and that is not set here gets a note: until it is set, that server alone does not start.
 */
function rewriteVariables(
  value: unknown,
  inputs: ReadonlyMap<string, string>,
  workspace: string | undefined,
  home: string,
  notes: string[],
  env: Readonly<Record<string, string | undefined>>,
): unknown {
  const note = (text: string) => {
    if (!notes.includes(text)) notes.push(text);
  };
  const unsetHere = (name: string) =>
    env[name] ? "" : "; it is not set here, and until it is this server does not start";
  if (typeof value === "string") {
    return value.replace(
      /\$\{(env|input):([^}]+)\}|\$\{workspaceFolder\}|\$\{userHome\}/g,
      (match, kind, id) => {
        if (kind === "env") {
          note(
            `\${env:${id}} became \${${id}}: mcpproxy reads ${id} from the environment it starts in${unsetHere(id)}`,
          );
          return `\${${id}}`;
        }
        if (kind === "input") {
          const variable = id.replace(/[^A-Za-z0-9]+/g, "_").toUpperCase();
          const description = inputs.get(id);
          note(
            `set ${variable} in the environment (VS Code asked for it as input "${id}"${description ? `: ${description}` : ""})` +
              (env[variable] ? "" : "; until it is set, this server does not start"),
          );
          return `\${${variable}}`;
        }
        if (match === "${userHome}") return home;
        if (workspace) return workspace;
        note("${workspaceFolder} in a user-level file has no folder: it was left as written; replace it");
        return match;
      },
    );
  }
  if (Array.isArray(value))
    return value.map((item) => rewriteVariables(item, inputs, workspace, home, notes, env));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        rewriteVariables(item, inputs, workspace, home, notes, env),
      ]),
    );
  }
  return value;
}

/**
 * Whether a client's server entry is mcpproxy: it runs mcpproxy (directly, or through a wrapper such
 * as npx), or it is the URL of the background service on `servicePort` (`import --use-service`
 * writes it: its /mcp, or a profile's /mcp/p/NAME, on loopback). Imported, such an entry would make
 * the proxy its own upstream.
 */
export function isMcpproxyEntry(entry: Readonly<Record<string, unknown>>, servicePort?: number): boolean {
  if (typeof entry.url === "string") return servicePort !== undefined && isServiceUrl(entry.url, servicePort);
  const words = [entry.command, ...(Array.isArray(entry.args) ? entry.args : [])];
  return words.some((word) => typeof word === "string" && /^mcpproxy(\.exe)?$/.test(basename(word)));
}

function isServiceUrl(url: string, port: number): boolean {
  try {
    const parsed = new URL(url);
    return (
      ["127.0.0.1", "localhost", "[::1]"].includes(parsed.hostname) &&
      parsed.port === String(port) &&
      /^\/mcp(\/p\/[^/]+)?\/?$/.test(parsed.pathname)
    );
  } catch {
    return false;
  }
}

/**
 * The identity of a server, whatever it is called: what it runs (its command line, or its URL) and
 * what it is given (its env, or its headers). The same command with another env is another server:
 * Claude Desktop's and Cursor's `memory`, each with its own MEMORY_FILE_PATH, keep different files.
 */
export function identityOf(entry: Record<string, unknown>): string {
  return `${launchOf(entry)} ${canonicalJson(givenOf(entry) ?? {})}`;
}

/** What a server runs, whatever it is given. */
function launchOf(entry: Record<string, unknown>): string {
  if (typeof entry.url === "string") return `url ${entry.url.replace(/\/+$/, "")}`;
  return `cmd ${JSON.stringify([entry.command, ...(Array.isArray(entry.args) ? entry.args : [])])}`;
}

/** What a server is given: a stdio server's env, an HTTP server's headers. */
function givenOf(entry: Record<string, unknown>): Record<string, unknown> | undefined {
  const given = typeof entry.url === "string" ? entry.headers : entry.env;
  return given !== null && typeof given === "object" && !Array.isArray(given)
    ? (given as Record<string, unknown>)
    : undefined;
}

/** The env variables (or headers) two entries of the same launch set differently, sorted. */
function keysThatDiffer(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const left = givenOf(a) ?? {};
  const right = givenOf(b) ?? {};
  return [...new Set([...Object.keys(left), ...Object.keys(right)])]
    .filter((key) => canonicalJson(left[key]) !== canonicalJson(right[key]))
    .sort();
}

/**
 * A server that runs what another one runs (in the config, or added before it) with another env or
 * other headers: which one, which of `env` or `headers`, and the keys that differ.
 */
interface DiffersFrom {
  name: string;
  given: "env" | "headers";
  keys: string[];
}

export type PlannedAction =
  | { kind: "add"; server: FoundServer; as: string; renamedFrom?: string; differsFrom?: DiffersFrom }
  | { kind: "skip"; server: FoundServer; sameAs: string };

export function planImport(
  existing: Readonly<Record<string, Record<string, unknown>>>,
  found: readonly FoundServer[],
): PlannedAction[] {
  const names = new Set(Object.keys(existing));
  const identities = new Map(Object.entries(existing).map(([name, entry]) => [identityOf(entry), name]));
  // The first server of each launch, to say which one a server with another env differs from.
  const launches = new Map<string, { name: string; entry: Record<string, unknown> }>();
  for (const [name, entry] of Object.entries(existing))
    if (!launches.has(launchOf(entry))) launches.set(launchOf(entry), { name, entry });
  const actions: PlannedAction[] = [];
  for (const server of found) {
    const same = identities.get(identityOf(server.entry));
    if (same !== undefined) {
      actions.push({ kind: "skip", server, sameAs: same });
      continue;
    }
    // A name the config would refuse (a `/`, `constructor`) is made usable, and said so.
    const base = usableServerName(server.name);
    let name = base;
    if (names.has(name)) {
      const suffix = server.file.client === "file" ? "imported" : server.file.client;
      name = `${base}-${suffix}`;
      for (let n = 2; names.has(name); n++) name = `${base}-${suffix}-${n}`;
    }
    names.add(name);
    identities.set(identityOf(server.entry), name);
    const launch = launchOf(server.entry);
    const sibling = launches.get(launch);
    if (!sibling) launches.set(launch, { name, entry: server.entry });
    const differsFrom: DiffersFrom | undefined = sibling
      ? {
          name: sibling.name,
          given: typeof server.entry.url === "string" ? "headers" : "env",
          keys: keysThatDiffer(sibling.entry, server.entry),
        }
      : undefined;
    actions.push({
      kind: "add",
      server,
      as: name,
      ...(name === server.name ? {} : { renamedFrom: server.name }),
      ...(differsFrom ? { differsFrom } : {}),
    });
  }
  return actions;
}
