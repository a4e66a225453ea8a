import { createHash } from "node:crypto";
import { canonicalJson } from "./canonical-json.ts";

/**
 * A server's launch spec: what makes it run (the command, its arguments, environment and
 * directory, or the URL and the headers sent there, the transport and the OAuth client). Whatever
 * an agent writes into a launch spec is inert until a person approves it: the entry is marked as
 * the agent's (`agent`) and runs only while the hash of its launch spec, as written (variables not
 * expanded), is the one `mcpproxy approve` recorded under `approved`. An entry without the mark is
 * the person's own and runs as it is. These are the keys an agent may write (agent-edits.ts).
 */
export const LAUNCH_KEYS = [
  "command",
  "args",
  "env",
  "cwd",
  "url",
  "serverUrl",
  "headers",
  "type",
  "transport",
  "oauth",
] as const;

/**
 * Keys of a launch spec that only a person sets (agent-edits.ts refuses them), hashed with the
 * rest: `inheritEnv` changes what a server receives, so a person who adds it to an agent's entry
 * approves that entry again, and `approve` shows it.
 */
const PERSON_LAUNCH_KEYS = ["inheritEnv"] as const;
const HASHED_KEYS = [...LAUNCH_KEYS, ...PERSON_LAUNCH_KEYS] as const;

/** The entry key that marks it as written by an agent (through `upstream_servers`). */
export const AGENT_MARK = "agent";
/** The entry key where `mcpproxy approve` records the launch hash a person approved. */
export const APPROVED_KEY = "approved";

export type LaunchSpec = Partial<Record<(typeof HASHED_KEYS)[number], unknown>>;

/** What an agent did to an entry, as recorded in its `agent` mark. */
export interface AgentMark {
  change: "added" | "updated" | "enabled";
  at: string;
  /** The launch spec that could run before the agent's change (for the diff `approve` shows). */
  before?: LaunchSpec | undefined;
}

type Entry = Readonly<Record<string, unknown>>;

export function launchSpecOf(entry: Entry): LaunchSpec {
  const spec: LaunchSpec = {};
  for (const key of HASHED_KEYS) if (Object.hasOwn(entry, key)) spec[key] = entry[key];
  return spec;
}

/** Stable across key order and formatting: the same spec always has the same hash. */
export function launchHash(entry: Entry): string {
  return `sha256:${createHash("sha256")
    .update(canonicalJson(launchSpecOf(entry)))
    .digest("hex")
    .slice(0, 32)}`;
}

export function agentMarkOf(entry: Entry): AgentMark | undefined {
  const mark = entry[AGENT_MARK];
  if (!Object.hasOwn(entry, AGENT_MARK) || mark === null || typeof mark !== "object" || Array.isArray(mark))
    return undefined;
  return mark as AgentMark;
}

/** Written by an agent, and its launch spec not (or no longer) the one a person approved. */
export function isAwaitingApproval(entry: Entry): boolean {
  return Object.hasOwn(entry, AGENT_MARK) && entry[APPROVED_KEY] !== launchHash(entry);
}

/** Whether two launch specs are the same (formatting and key order aside). */
export function sameLaunch(a: Entry, b: Entry): boolean {
  return canonicalJson(launchSpecOf(a)) === canonicalJson(launchSpecOf(b));
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}/g;

/** The environment variables a spec would receive when expanded, each with where it is used. */
function variablesOf(spec: LaunchSpec): { name: string; at: string }[] {
  const found: { name: string; at: string }[] = [];
  const walk = (value: unknown, at: string) => {
    if (typeof value === "string") {
      for (const match of value.matchAll(VARIABLE)) found.push({ name: match[1]!, at });
    } else if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) walk(item, `${at}.${i}`);
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) walk(item, at ? `${at}.${key}` : key);
    }
  };
  walk(spec, "");
  // Names it inherits as they are (`true`, all of them, is shown by `approve` as such).
  if (Array.isArray(spec.inheritEnv)) {
    for (const name of spec.inheritEnv) if (typeof name === "string") found.push({ name, at: "inheritEnv" });
  }
  return found;
}

/** The scheme, host and port a URL reaches; undefined when it is not a URL. */
export function originOf(url: unknown): string | undefined {
  if (typeof url !== "string") return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * The one question asked before anything of a server starts or connects (upstream-connection.ts,
 * on every path): the reason it may not, or undefined when it may. A server whose config lacks a
 * variable it needs may not either: its placeholders must never reach a process or a host.
 */
export function launchRefusal(server: {
  name: string;
  awaitingApproval?: string | undefined;
  configProblem?: string | undefined;
}) {
  if (server.awaitingApproval) {
    return (
      `${server.name} was added or changed by an agent and awaits the user's approval: nothing of it runs ` +
      `until the user runs \`mcpproxy approve ${server.name}\``
    );
  }
  return server.configProblem ? `${server.name} is not started: ${server.configProblem}` : undefined;
}

/** A server entry an agent wrote that waits for a person, with what `approve` shows of it. */
export interface PendingLaunch {
  server: string;
  change: AgentMark["change"];
  at?: string | undefined;
  /** The launch spec as written: `${VAR}` names, never their values. */
  launch: LaunchSpec;
  /** What could run before the agent's change, when something could. */
  before?: LaunchSpec | undefined;
  /** The person's environment variables it would receive once approved. */
  variables: { name: string; at: string }[];
  /** What approving it records under `approved`. */
  hash: string;
}

export function pendingLaunches(entries: Readonly<Record<string, Entry>>): PendingLaunch[] {
  return Object.entries(entries)
    .filter(([, entry]) => isAwaitingApproval(entry))
    .map(([server, entry]) => {
      const mark = agentMarkOf(entry);
      const launch = launchSpecOf(entry);
      return {
        server,
        change: mark?.change ?? "added",
        ...(mark?.at ? { at: mark.at } : {}),
        launch,
        ...(mark?.before ? { before: mark.before } : {}),
        variables: variablesOf(launch),
        hash: launchHash(entry),
      };
    })
    .sort((a, b) => a.server.localeCompare(b.server));
}
