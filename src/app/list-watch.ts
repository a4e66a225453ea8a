import { describeError } from "../errors.ts";
import type { CapabilityApprovals } from "../index/capability-approvals.ts";
import type { Logger } from "../log.ts";
import type { ChangeNotifier } from "../server/federation/change-feed.ts";
import type { UpstreamPool } from "../upstream/upstream-pool.ts";

/**
 * Notices when the federated prompt or resource lists change through the proxy rather than an
 * upstream's own `list_changed`: a server that declares prompts or resources connects, leaves or
 * reconnects (serve starting its servers, an `upstream_servers` add or remove, an edited config, a
 * restart after a crash), a server held for approval is approved, or a prompt or template is held
 * or approved (`mcpproxy approve`, which another process runs: hence a look every `intervalMs`
 * rather than an event). Each kind is told only when what decides it changed; the first look
 * tells nothing.
 */
export interface ListWatchOptions {
  /** Connected servers only: a look walks them, never every configured one, and only once they changed. */
  pool: Pick<UpstreamPool, "live" | "liveVersion">;
  approvals: () => CapabilityApprovals | undefined;
  changes: Pick<ChangeNotifier, "promptsChanged" | "resourcesChanged">;
  logger: Logger;
  intervalMs?: number;
}

const LIST_WATCH_MS = 1_000;

/** What decides each list: the offering servers (and since when they are connected), and what is held. */
export function listStamps(options: Pick<ListWatchOptions, "pool" | "approvals">): {
  prompts: string;
  resources: string;
} {
  const { pool } = options;
  const approvals = options.approvals();
  const live = pool.live();
  const offering = (feature: "prompts" | "resources") =>
    live
      .filter(({ connection }) => connection.client.getServerCapabilities()?.[feature])
      .filter(({ server }) => !approvals?.serverHold(server))
      .sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0))
      .map(({ server, connectedSince }) => `${server}@${connectedSince ?? ""}`);
  // A server held whole lists nothing, whatever it offers: its items tell nothing until it is approved.
  const quarantined = (approvals?.held() ?? []).filter((item) => !approvals?.serverHold(item.server));
  const held = (kind: "prompt" | "template") =>
    quarantined
      .filter((item) => item.kind === kind)
      .map((item) => `${item.server}/${item.name}:${item.reason}`)
      .sort();
  return {
    prompts: JSON.stringify([offering("prompts"), held("prompt")]),
    resources: JSON.stringify([offering("resources"), held("template")]),
  };
}

/**
 * `listStamps` as of now, made again only when a cheap look (the pool's live version, and whether
 * the catalog's approvals were written, here or by another process) says something may have
 * changed: the full look walks every connected server and reads every held prompt and template.
 * The cheap look costs the same with 20,000 servers connected as with one.
 */
export function createListLook(options: Pick<ListWatchOptions, "pool" | "approvals">) {
  const { pool } = options;
  let seen = "";
  let last: ReturnType<typeof listStamps> | undefined;
  return () => {
    const cheap = `${options.approvals()?.version() ?? ""} ${pool.liveVersion()}`;
    if (cheap !== seen || !last) {
      last = listStamps(options);
      seen = cheap;
    }
    return last;
  };
}

/** Starts looking; returns the function that stops. */
export function startListWatch(options: ListWatchOptions): () => void {
  const look = createListLook(options);
  let last = look();
  const timer = setInterval(() => {
    let now: typeof last;
    try {
      now = look();
    } catch (error) {
      options.logger.debug(`list watch: ${describeError(error)}`);
      return;
    }
    if (now.prompts !== last.prompts) options.changes.promptsChanged();
    if (now.resources !== last.resources) options.changes.resourcesChanged();
    last = now;
  }, options.intervalMs ?? LIST_WATCH_MS);
  timer.unref?.();
  return () => clearInterval(timer);
}
