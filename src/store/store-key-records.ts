import { ProxyError } from "../errors.ts";
import type { Sql, Tx } from "./postgres/connect.ts";
import type { StoreKey } from "./store-key.ts";
import {
  deriveStoreKey,
  type KdfParams,
  kdfParamsFrom,
  NEW_STORE_KEY_ENV,
  newKdfParams,
  type StoreSecret,
} from "./store-key-derivation.ts";

/**
 * The store key's records in `mcpproxy.meta`: the check value of the key (never the key), and
 * beside it the parameters a passphrase is stretched with (store-key-derivation.ts). The first
 * opening of a store records both, the parameters first: a store that holds a check value and no
 * parameters was set up by an mcpproxy before them (its passphrase read with HKDF alone). Every
 * later opening derives the key with the store's parameters and compares the check value.
 */
export const KEY_CHECK = "store_key_check";
export const KEY_PARAMS = "store_key_kdf";

/** The key `secret` stands for in this store; a writer records fresh parameters in a store without a key yet. */
export async function storeKeyIn(sql: Sql | Tx, secret: StoreSecret, isReadOnly: boolean): Promise<StoreKey> {
  if (!isReadOnly)
    await sql`
      INSERT INTO mcpproxy.meta (key, value)
      SELECT ${KEY_PARAMS}, ${JSON.stringify(newKdfParams())}
      WHERE NOT EXISTS (SELECT 1 FROM mcpproxy.meta WHERE key = ${KEY_CHECK})
      ON CONFLICT DO NOTHING`;
  return deriveStoreKey(secret, await recordedKdfParams(sql));
}

/** The parameters the store's passphrase is stretched with; undefined in a store set up before them (or none). */
async function recordedKdfParams(sql: Sql | Tx): Promise<KdfParams | undefined> {
  const [row] = await sql<{ value: string }[]>`SELECT value FROM mcpproxy.meta WHERE key = ${KEY_PARAMS}`;
  return row ? kdfParamsFrom(row.value) : undefined;
}

/** The first opening records its key's check value; every later one must have the same key. */
export async function checkKey(sql: Sql | Tx, key: StoreKey, isReadOnly = false): Promise<void> {
  if (!isReadOnly)
    await sql`INSERT INTO mcpproxy.meta (key, value) VALUES (${KEY_CHECK}, ${key.check}) ON CONFLICT DO NOTHING`;
  const recorded = await recordedKeyCheck(sql);
  if (recorded === undefined) throw neverSetUp();
  if (recorded !== key.check)
    throw new ProxyError(
      "CONFIG_INVALID",
      "MCPPROXY_STORE_KEY is not the key the shared store was set up with: give every replica the same key " +
        "(the secrets in the store cannot be read with another).",
    );
}

/** The check value of the key the store was set up with (undefined: none yet); compare with `StoreKey.check`. */
export async function recordedKeyCheck(sql: Sql | Tx): Promise<string | undefined> {
  const [row] = await sql<{ value: string }[]>`SELECT value FROM mcpproxy.meta WHERE key = ${KEY_CHECK}`;
  return row?.value;
}

export const neverSetUp = () =>
  new ProxyError(
    "CONFIG_INVALID",
    "The shared store was never set up (no key recorded): run `mcpproxy store init` or start a replica first.",
  );

/** What is said of a passphrase read as a store set up before scrypt had it (logged at start, shown by doctor). */
export const LEGACY_KEY_WARNING =
  "MCPPROXY_STORE_KEY is a passphrase and this store was set up by an mcpproxy that stretched it with HKDF " +
  "alone: whoever can read the store can test guesses of it fast. With every replica stopped, run " +
  `\`mcpproxy store rekey\` (the same passphrase, stretched with scrypt), or better move to a random key: ` +
  `\`${NEW_STORE_KEY_ENV}=$(openssl rand -hex 32) mcpproxy store rekey\`.`;
