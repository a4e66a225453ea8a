import type { ToolListing } from "./server-lists.ts";
import { upstreamErrorText } from "./upstream-errors.ts";

/**
 * A server's tools listed again when it says they changed (notifications/tools/list_changed, a
 * reopened listen stream, another replica's hint). Handled whatever the server declared: some
 * servers send list_changed without declaring it. A storm of them is coalesced: one re-list in
 * flight and one pending at most, and the pending one starts after the one in flight, so the last
 * list read is at least as new as the last notification (2,000 notifications from a 5,000-tool
 * server cost 23 CPU-seconds uncoalesced).
 */
export interface ToolRelistOptions {
  /** Every page of the server's tools, bounded (server-lists.ts). */
  list(): Promise<ToolListing>;
  /** Nothing is listed, or reported, once the connection has ended. */
  isOpen(): boolean;
  onListed(fresh: ToolListing): void;
  /** A re-list failed (the previous list stays). */
  onFailed(reason: string): void;
}

/** The trigger: call it on every sign of a change. */
export function createToolRelist(options: ToolRelistOptions): () => void {
  let relisting: Promise<void> | undefined;
  let isRelistPending = false;
  const relist = async () => {
    do {
      isRelistPending = false;
      try {
        const fresh = await options.list();
        if (!options.isOpen()) return;
        options.onListed(fresh);
      } catch (error) {
        if (options.isOpen()) options.onFailed(upstreamErrorText(error));
      }
    } while (isRelistPending && options.isOpen());
  };
  return () => {
    if (!options.isOpen()) return;
    if (relisting) {
      isRelistPending = true;
      return;
    }
    relisting = relist().finally(() => {
      relisting = undefined;
    });
  };
}
