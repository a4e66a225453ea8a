import {
  AGENT_MARK,
  type AgentMark,
  APPROVED_KEY,
  agentMarkOf,
  isAwaitingApproval,
  LAUNCH_KEYS,
  type LaunchSpec,
  launchSpecOf,
  originOf,
  sameLaunch,
} from "./launch-spec.ts";

/**
 * What an agent's change to a server entry (through `upstream_servers`) becomes in the config
 * file. An agent may write a launch spec and the connection timeouts, nothing else: keys that lower
 * protection (`trust`, `quarantined`, `lazy`, `validateArguments`, `roots`, `relayOutsideCalls`,
 * `autoRetryFallback`, `enabled`, the approval marks), the call limits (`rateLimit`, `maxConcurrent`, `queueSize`,
 * `queueTimeoutMs`: the brake on an agent's loop is not the agent's to lift), `inheritEnv` (the person's variables a server gets),
 * the tool overrides `tools` and `disabledTools` (a description an agent wrote would be an injection
 * path past the poisoning scan, and hiding is not its call either: it would hide tools the person
 * relies on, including the one that would reveal it) and
 * `oauth.clientMetadataUrl` (who mcpproxy logs in as) are a person's alone. A launch spec it adds
 * or changes, and a server it enables, are marked as its own and wait for `mcpproxy approve`
 * (launch-spec.ts).
 */
const AGENT_SETTABLE_KEYS: ReadonlySet<string> = new Set([...LAUNCH_KEYS, "timeoutMs", "callTimeoutMs"]);

type Entry = Record<string, unknown>;

/**
 * Keys inside `oauth` that only a person sets: a client metadata document URL is the identity
 * mcpproxy logs in as, and one an agent chose would have the person consent to the agent's client.
 */
const PERSON_OAUTH_KEYS: ReadonlySet<string> = new Set(["clientMetadataUrl"]);

/** The keys of `entry` an agent may not set, in the order written (`oauth.x` for those inside oauth). */
export function keysRefusedToAgents(entry: Readonly<Entry>): string[] {
  const oauth = entry.oauth;
  const inOauth =
    typeof oauth === "object" && oauth !== null
      ? Object.keys(oauth)
          .filter((key) => PERSON_OAUTH_KEYS.has(key))
          .map((key) => `oauth.${key}`)
      : [];
  return [...Object.keys(entry).filter((key) => !AGENT_SETTABLE_KEYS.has(key)), ...inOauth];
}

/** A server an agent adds: its entry, marked as the agent's. */
export function agentAdded(entry: Readonly<Entry>, now: Date): Entry {
  return { ...entry, [AGENT_MARK]: mark("added", now, undefined) };
}

/**
 * An agent's update of an entry. Headers and the OAuth client belong to the URL's origin: when the
 * origin changes they are dropped, unless the agent gives new ones (which then wait for approval
 * like the rest). A changed launch spec is marked as the agent's, with what could run before.
 */
export function agentUpdated(previous: Readonly<Entry>, change: Readonly<Entry>, now: Date): Entry {
  const next: Entry = { ...previous, ...change };
  const before = originOf(previous.url ?? previous.serverUrl);
  const after = originOf(next.url ?? next.serverUrl);
  if (before !== after) {
    if (!Object.hasOwn(change, "headers")) delete next.headers;
    if (!Object.hasOwn(change, "oauth")) delete next.oauth;
  }
  if (sameLaunch(previous, next)) return next;
  delete next[APPROVED_KEY];
  next[AGENT_MARK] = mark("updated", now, runnableLaunch(previous));
  return next;
}

/**
 * An agent enabling a server: a person disabled it, so it waits for a person's approval again. One
 * that waits already keeps its mark (an agent's launch spec stays a new one).
 */
export function agentEnabled(previous: Readonly<Entry>, now: Date): Entry {
  const { disabled: _disabled, [APPROVED_KEY]: _approved, ...rest } = previous;
  const waiting = isAwaitingApproval(previous) ? agentMarkOf(previous) : undefined;
  return { ...rest, enabled: true, [AGENT_MARK]: waiting ?? mark("enabled", now, launchSpecOf(previous)) };
}

/** The entry once a person approved its launch spec: the hash recorded, the old spec let go. */
export function personApproved(entry: Readonly<Entry>, hash: string): Entry {
  const existing = agentMarkOf(entry);
  const { before: _before, ...kept } = existing ?? { change: "added", at: "" };
  return { ...entry, [AGENT_MARK]: kept, [APPROVED_KEY]: hash };
}

/** What could run before an edit: the entry's launch spec if it was approved, else what the mark kept. */
function runnableLaunch(entry: Readonly<Entry>): LaunchSpec | undefined {
  return isAwaitingApproval(entry) ? agentMarkOf(entry)?.before : launchSpecOf(entry);
}

function mark(change: AgentMark["change"], now: Date, before: LaunchSpec | undefined): AgentMark {
  return { change, at: now.toISOString(), ...(before ? { before } : {}) };
}
