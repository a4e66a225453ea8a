import { ProxyError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { oauthPurpose } from "./oauth-records.ts";
import { LOCKS, MCPPROXY_LOCK_SPACE } from "./postgres/lock-keys.ts";
import { schemaStatus } from "./postgres/migrations.ts";
import { HEARTBEAT_MS, metaPurpose, SEALED_META } from "./shared-store.ts";
import { type StoreTarget, withConnection } from "./store-admin.ts";
import type { StoreKey } from "./store-key.ts";
import { deriveStoreKey, NEW_STORE_KEY_ENV, newKdfParams, storeSecretFrom } from "./store-key-derivation.ts";
import { checkKey, KEY_CHECK, KEY_PARAMS, storeKeyIn } from "./store-key-records.ts";

/**
 * `mcpproxy store rekey`: everything the store keeps sealed, sealed again under a new key in one
 * transaction. The new key is MCPPROXY_STORE_NEW_KEY (a move to a random key, or to another
 * passphrase) or, without it, the same MCPPROXY_STORE_KEY stretched again with fresh parameters:
 * the way off a passphrase read with HKDF alone (a store set up before scrypt), and the way to
 * raise scrypt's cost later. Replicas hold the key from their start, so it is refused while one is
 * alive (none may go on sealing with the old key). Kept large results, encrypted under the old
 * key, are dropped: they are transient, and a client that asks for one is told it expired.
 */
export interface RekeyOutcome {
  from: StoreKey["derivation"];
  to: StoreKey["derivation"];
  /** The shared secrets and OAuth logins sealed again. */
  secrets: number;
  logins: number;
  droppedResults: number;
}

export async function rekeyStore(
  target: StoreTarget,
  env: Readonly<Record<string, string | undefined>>,
  logger?: Logger,
): Promise<RekeyOutcome> {
  const current = storeSecretFrom(env);
  const next = env[NEW_STORE_KEY_ENV]?.trim() ? storeSecretFrom(env, NEW_STORE_KEY_ENV) : current;
  return withConnection(target, "store rekey", logger, async (sql) => {
    const status = await schemaStatus(sql);
    if (status.current !== status.latest)
      throw new ProxyError(
        "CONFIG_INVALID",
        `The shared store is at schema version ${status.current}, this mcpproxy's is ${status.latest}: ` +
          "run `mcpproxy store migrate` (or `store init` for a new store) first.",
      );
    return sql.begin(async (tx) => {
      // The migrations' lock: a replica starting meanwhile waits, then finds the new key's check value.
      await tx`SELECT pg_advisory_xact_lock(${MCPPROXY_LOCK_SPACE}, ${LOCKS.migrations})`;
      const alive = await tx<{ id: string }[]>`
        SELECT id FROM mcpproxy.replicas
        WHERE seen_at > now() - make_interval(secs => ${(3 * HEARTBEAT_MS) / 1000})`;
      if (alive.length > 0)
        throw new ProxyError(
          "USAGE",
          `${alive.length} replica(s) use the store (${alive.map((row) => row.id).join(", ")}): they hold the ` +
            "old key and would go on sealing with it. Stop every replica, then run `mcpproxy store rekey` " +
            `again (a replica that died is forgotten ${(3 * HEARTBEAT_MS) / 1000} s after its last heartbeat).`,
        );
      const oldKey = await storeKeyIn(tx, current, true);
      await checkKey(tx, oldKey, true);
      const params = newKdfParams();
      const newKey = await deriveStoreKey(next, params);
      let secrets = 0;
      for (const name of SEALED_META) {
        const [row] = await tx<{ value: string }[]>`SELECT value FROM mcpproxy.meta WHERE key = ${name}`;
        if (!row) continue;
        const plain = oldKey.open(Buffer.from(row.value, "base64"), metaPurpose(name));
        const sealed = newKey.seal(plain, metaPurpose(name)).toString("base64");
        await tx`UPDATE mcpproxy.meta SET value = ${sealed} WHERE key = ${name}`;
        secrets++;
      }
      const logins = await tx<
        { server: string; sealed: Buffer }[]
      >`SELECT server, sealed FROM mcpproxy.oauth_records`;
      for (const { server, sealed } of logins) {
        const plain = oldKey.open(Buffer.from(sealed), oauthPurpose(server));
        await tx`
          UPDATE mcpproxy.oauth_records SET sealed = ${newKey.seal(plain, oauthPurpose(server))}, updated_at = now()
          WHERE server = ${server}`;
      }
      const dropped = await tx`DELETE FROM mcpproxy.kept_results`;
      await tx`
        INSERT INTO mcpproxy.meta (key, value) VALUES (${KEY_PARAMS}, ${JSON.stringify(params)}), (${KEY_CHECK}, ${newKey.check})
        ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
      return {
        from: oldKey.derivation,
        to: newKey.derivation,
        secrets,
        logins: logins.length,
        droppedResults: dropped.count,
      };
    });
  });
}
