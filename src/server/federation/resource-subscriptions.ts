import { EmptyResultSchema } from "@modelcontextprotocol/core";
import { describeError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import type { UpstreamPool } from "../../upstream/upstream-pool.ts";
import { FEDERATED_NAMING, type Naming } from "./federated-names.ts";

/**
 * Who wants the updates of which federated resource, across both eras: legacy sessions
 * (`resources/subscribe`) and 2026-07-28 listen streams (`resourceSubscriptions`). The owning
 * server is subscribed once, when the first holder of a URI comes, and unsubscribed when the last
 * one goes (or its session closes, or its stream ends). Changes to one URI run one after another,
 * so a subscribe and an unsubscribe racing for it leave the server as the holders want it.
 */
export interface ResourceSubscriptions {
  /**
   * `holder` wants updates of the federated `uri`. Rejects with the server's error when the server
   * had to be subscribed and refused; `holder` then holds nothing of `uri`.
   */
  add(holder: string, uri: string): Promise<void>;
  /** `holder` no longer wants `uri`; rejects with the server's error when unsubscribing failed. */
  remove(holder: string, uri: string): Promise<void>;
  /** Everything `holder` held (its session closed, its stream ended); failures are logged. */
  release(holder: string): void;
}

export interface ResourceSubscriptionsOptions {
  pool: Pick<UpstreamPool, "request">;
  logger: Logger;
  /** How the URIs clients hold name the server's own (default: federated). */
  naming?: Naming | undefined;
}

interface Entry {
  holders: Set<string>;
  /** The owning server was subscribed (and not unsubscribed since). */
  isSubscribed: boolean;
  /** The last change queued for this URI. */
  queue: Promise<void>;
  pending: number;
}

export function createResourceSubscriptions(options: ResourceSubscriptionsOptions): ResourceSubscriptions {
  const { pool, logger } = options;
  const entries = new Map<string, Entry>();
  const held = new Map<string, Set<string>>();

  const send = (method: "resources/subscribe" | "resources/unsubscribe", uri: string) => {
    const owner = (options.naming ?? FEDERATED_NAMING).fromUri(uri);
    if (!owner) return Promise.reject(new Error(`${uri} is not a resource of this proxy`));
    return pool.request(owner.server, { method, params: { uri: owner.uri } }, EmptyResultSchema);
  };

  /** Brings the server's subscription in line with the holders, after whatever is queued for `uri`. */
  const settle = (uri: string, entry: Entry): Promise<void> => {
    entry.pending++;
    const run = entry.queue.then(async () => {
      const isWanted = entry.holders.size > 0;
      if (isWanted && !entry.isSubscribed) {
        await send("resources/subscribe", uri);
        entry.isSubscribed = true;
      } else if (!isWanted && entry.isSubscribed) {
        entry.isSubscribed = false;
        await send("resources/unsubscribe", uri);
      }
    });
    entry.queue = run.then(
      () => undefined,
      () => undefined,
    );
    void entry.queue.then(() => {
      entry.pending--;
      if (
        entry.pending === 0 &&
        entry.holders.size === 0 &&
        !entry.isSubscribed &&
        entries.get(uri) === entry
      )
        entries.delete(uri);
    });
    return run;
  };

  const entryOf = (uri: string) => {
    let entry = entries.get(uri);
    if (!entry) {
      entry = { holders: new Set(), isSubscribed: false, queue: Promise.resolve(), pending: 0 };
      entries.set(uri, entry);
    }
    return entry;
  };

  const drop = (holder: string, uri: string) => {
    const uris = held.get(holder);
    uris?.delete(uri);
    if (uris?.size === 0) held.delete(holder);
    const entry = entries.get(uri);
    entry?.holders.delete(holder);
    return entry;
  };

  return {
    async add(holder, uri) {
      const entry = entryOf(uri);
      entry.holders.add(holder);
      const uris = held.get(holder) ?? new Set<string>();
      held.set(holder, uris.add(uri));
      try {
        await settle(uri, entry);
      } catch (error) {
        // Refused: this holder holds nothing of it, and no one else will want it unsubscribed.
        drop(holder, uri);
        await settle(uri, entry).catch(() => undefined);
        throw error;
      }
    },

    async remove(holder, uri) {
      const entry = drop(holder, uri);
      if (entry) await settle(uri, entry);
    },

    release(holder) {
      for (const uri of [...(held.get(holder) ?? [])]) {
        const entry = drop(holder, uri);
        if (!entry) continue;
        settle(uri, entry).catch((error: unknown) =>
          logger.debug(`unsubscribing ${uri} failed: ${describeError(error)}`),
        );
      }
    },
  };
}
