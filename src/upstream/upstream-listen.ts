import type { Client, McpSubscription, SubscriptionFilter } from "@modelcontextprotocol/client";
import { upstreamErrorText } from "./upstream-errors.ts";

/**
 * A 2026-07-28 server sends list changes only on a `subscriptions/listen` stream the client
 * holds open (there are no unsolicited notifications any more): without one, a modern server's
 * tool changes would never reach the index. The stream asks for the list changes the server
 * declares; its notifications reach the client's handlers as a 2025 server's do. When the server
 * or the network ends it, it is opened again after a pause (doubling while it keeps failing), and
 * `onReopened` runs: a change sent while no stream was open was missed, so the lists are read again.
 */
export interface ListenOptions {
  /** Called after a stream that ended was opened again. */
  onReopened: () => void;
  /** A stream could not be opened (it is tried again). */
  onProblem: (reason: string) => void;
  timeoutMs: number;
}

const FIRST_PAUSE_MS = 1_000;
const MAX_PAUSE_MS = 60_000;
const STEADY_MS = 30_000;

/** What of a server's declared capabilities a listen stream asks for; undefined when it declares no list changes. */
export function listenFilter(client: Client): SubscriptionFilter | undefined {
  const declared = client.getServerCapabilities();
  const filter: SubscriptionFilter = {
    ...(declared?.tools?.listChanged ? { toolsListChanged: true } : {}),
    ...(declared?.prompts?.listChanged ? { promptsListChanged: true } : {}),
    ...(declared?.resources?.listChanged ? { resourcesListChanged: true } : {}),
  };
  return Object.keys(filter).length > 0 ? filter : undefined;
}

/** Keeps a listen stream open until the returned function is called. */
export function keepListening(
  client: Client,
  filter: SubscriptionFilter,
  options: ListenOptions,
): () => void {
  let isStopped = false;
  let subscription: McpSubscription | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pause = FIRST_PAUSE_MS;

  const open = async (isReopen: boolean) => {
    try {
      subscription = await client.listen(filter, { timeout: options.timeoutMs });
      if (isStopped) {
        void subscription.close();
        return;
      }
      if (isReopen) options.onReopened();
      const openedAt = Date.now();
      const how = await subscription.closed;
      if (isStopped || how === "local") return;
      // Only a stream that lasted counts as working: one the server ends at once does not reset the pause.
      if (Date.now() - openedAt > STEADY_MS) pause = FIRST_PAUSE_MS;
    } catch (error) {
      if (isStopped) return;
      options.onProblem(`subscriptions/listen failed: ${upstreamErrorText(error)}`);
    }
    timer = setTimeout(() => void open(true), pause);
    timer.unref?.();
    pause = Math.min(pause * 2, MAX_PAUSE_MS);
  };
  void open(false);
  return () => {
    isStopped = true;
    clearTimeout(timer);
    void subscription?.close().catch(() => undefined);
  };
}
