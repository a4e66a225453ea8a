import type { SharedOAuthRecords } from "../store/oauth-records.ts";
import type { OAuthRecord, OAuthStore } from "./oauth-store.ts";

/**
 * A server's OAuth record kept in the shared store (store/oauth-records.ts) rather than in the data
 * dir: the same OAuthStore the provider and the login use, so a login or a refresh on one replica
 * is every replica's. Bound to the server's URL as the file is: a server whose URL changed starts over.
 */
export function sharedOAuthStore(records: SharedOAuthRecords, server: string, serverUrl: string): OAuthStore {
  const load = (): OAuthRecord => {
    const record = records.get(server) as OAuthRecord | undefined;
    return record?.serverUrl === serverUrl && typeof record.issuers === "object"
      ? record
      : { serverUrl, issuers: {} };
  };
  return {
    path: `the shared store (${server})`,
    load,
    update(change) {
      const next = change(load());
      records.put(server, next);
      return next;
    },
    clear: () => records.remove(server),
    refreshAlone: (work) => records.exclusive(server, work),
  };
}
