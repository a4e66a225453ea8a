import type { Client, McpSubscription, SubscriptionFilter } from "@modelcontextprotocol/client";
import { upstreamErrorText } from "./upstream-errors.ts";

/**
 * A 2026-07-28 server sends list changes and resource updates only on a `subscriptions/listen`
 * stream the client holds open (there are no unsolicited notifications and no resources/subscribe
 * any more): without one, a modern server's tool changes would never reach the index. The stream
 * asks for the list changes the server declares and, when it takes subscriptions, the resources the
 * proxy's clients want (`filter` is read at each open); its notifications reach the client's
 * handlers as a 2025 server's do. When the wanted resources change, `refresh` opens a stream with
 * the new filter and closes the old one once the new one is acknowledged (no gap in which an update
 * is lost). When the server or the network ends a stream, it is opened again after a pause
 * (doubling while it keeps failing), and `onReopened` runs: a change sent while no stream was open
 * was missed, so the lists are read again.
 */
export interface ListenOptions {
  /** What to listen for, read each time a stream opens; undefined when nothing is (any more). */
  filter: () => SubscriptionFilter | undefined;
  /** Called after a stream that ended (or never opened) was opened again. */
  onReopened: () => void;
  /** A stream could not be opened (it is tried again). */
  onProblem: (reason: string) => void;
  timeoutMs: number;
}

export interface Listening {
  /**
   * Opens a stream with the filter as it is now in place of the open one; resolves with what the
   * server honoured (undefined when nothing is to be listened for). Calls made while one waits to
   * start share it. Rejects when the stream could not be opened (the old one, if any, stays).
   */
  refresh(): Promise<SubscriptionFilter | undefined>;
  stop(): void;
}

const FIRST_PAUSE_MS = 1_000;
const MAX_PAUSE_MS = 60_000;
const STEADY_MS = 30_000;

/**
 * What of a server's declared capabilities a listen stream asks for, with `resourceSubscriptions`
 * (the server's own URIs) when it takes subscriptions; undefined when that is nothing.
 */
export function listenFilter(
  client: Client,
  resourceSubscriptions: readonly string[] = [],
): SubscriptionFilter | undefined {
  const declared = client.getServerCapabilities();
  const filter: SubscriptionFilter = {
    ...(declared?.tools?.listChanged ? { toolsListChanged: true } : {}),
    ...(declared?.prompts?.listChanged ? { promptsListChanged: true } : {}),
    ...(declared?.resources?.listChanged ? { resourcesListChanged: true } : {}),
    ...(declared?.resources?.subscribe && resourceSubscriptions.length > 0
      ? { resourceSubscriptions: [...resourceSubscriptions] }
      : {}),
  };
  return Object.keys(filter).length > 0 ? filter : undefined;
}

/** Keeps a listen stream open (when the filter asks for anything) until `stop` is called. */
export function keepListening(client: Client, options: ListenOptions): Listening {
  let isStopped = false;
  let subscription: McpSubscription | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pause = FIRST_PAUSE_MS;
  /** A stream ended or could not be opened: the next one that opens may have missed changes. */
  let wasDropped = false;
  /** Opens run one after another; `waiting` is the one not started yet, which later calls share. */
  let queue: Promise<unknown> = Promise.resolve();
  let waiting: Promise<SubscriptionFilter | undefined> | undefined;

  const retryLater = () => {
    if (isStopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => void refresh().catch(() => undefined), pause);
    timer.unref?.();
    pause = Math.min(pause * 2, MAX_PAUSE_MS);
  };

  const watch = (opened: McpSubscription) => {
    const openedAt = Date.now();
    void opened.closed.then((how) => {
      // Closed by us (stopped, or replaced by a newer stream): nothing to do.
      if (isStopped || opened !== subscription || how === "local") return;
      subscription = undefined;
      wasDropped = true;
      // Only a stream that lasted counts as working: one the server ends at once does not reset the pause.
      if (Date.now() - openedAt > STEADY_MS) pause = FIRST_PAUSE_MS;
      retryLater();
    });
  };

  const replace = async (): Promise<SubscriptionFilter | undefined> => {
    clearTimeout(timer);
    const filter = options.filter();
    const previous = subscription;
    if (!filter) {
      subscription = undefined;
      void previous?.close().catch(() => undefined);
      return undefined;
    }
    let opened: McpSubscription;
    try {
      opened = await client.listen(filter, { timeout: options.timeoutMs });
    } catch (error) {
      if (isStopped) return undefined;
      options.onProblem(`subscriptions/listen failed: ${upstreamErrorText(error)}`);
      if (!subscription) {
        wasDropped = true;
        retryLater();
      }
      throw error;
    }
    if (isStopped) {
      void opened.close().catch(() => undefined);
      return undefined;
    }
    subscription = opened;
    watch(opened);
    void previous?.close().catch(() => undefined);
    if (wasDropped) {
      wasDropped = false;
      options.onReopened();
    }
    return opened.honoredFilter;
  };

  const refresh = (): Promise<SubscriptionFilter | undefined> => {
    if (waiting) return waiting;
    const run = queue.then(() => {
      waiting = undefined;
      return isStopped ? undefined : replace();
    });
    waiting = run;
    queue = run.catch(() => undefined);
    return run;
  };

  void refresh().catch(() => undefined);
  return {
    refresh,
    stop() {
      isStopped = true;
      clearTimeout(timer);
      void subscription?.close().catch(() => undefined);
    },
  };
}
