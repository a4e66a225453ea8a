import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";

/**
 * The key that encrypts the secrets the shared store holds (OAuth tokens, the requestState key):
 * `MCPPROXY_STORE_KEY`, from the environment only, the same on every replica. What is stored is
 * sealed with AES-256-GCM and bound to what it is (`purpose`), so a sealed value cannot be moved
 * to another row. The store keeps a check value of the key (never the key) so that a replica
 * started with a different key refuses to start instead of reading garbage. How the variable
 * becomes the key (random bytes, or a passphrase stretched with scrypt): store-key-derivation.ts.
 */
export const STORE_KEY_ENV = "MCPPROXY_STORE_KEY";

export interface StoreKey {
  seal(plain: Buffer, purpose: string): Buffer;
  /** Throws when the value was not sealed with this key for this purpose. */
  open(sealed: Buffer, purpose: string): Buffer;
  /** A value that identifies the key without revealing it (kept in the store). */
  readonly check: string;
  /** A key of its own for one use (HKDF of this key and `purpose`), for a cipher other than seal's. */
  subkey(purpose: string): Buffer;
  /**
   * How MCPPROXY_STORE_KEY became this key (store-key-derivation.ts): random bytes as they are, a
   * passphrase stretched with scrypt, or one read as a store set up before scrypt had it (HKDF).
   */
  readonly derivation: "random" | "scrypt" | "legacy-hkdf";
}

const VERSION = 1;

export function createStoreKey(key: Buffer, derivation: StoreKey["derivation"] = "random"): StoreKey {
  if (key.length !== 32) throw new Error("a store key is 32 bytes");
  return {
    derivation,
    check: createHmac("sha256", key).update("mcpproxy store key check").digest("hex").slice(0, 32),
    subkey: (purpose) => Buffer.from(hkdfSync("sha256", key, "mcpproxy-store", `subkey:${purpose}`, 32)),
    seal(plain, purpose) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(purpose));
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([Buffer.from([VERSION]), iv, body, cipher.getAuthTag()]);
    },
    open(sealed, purpose) {
      if (sealed.length < 1 + 12 + 16 || sealed[0] !== VERSION) throw new Error("not a sealed value");
      const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(1, 13));
      decipher.setAAD(Buffer.from(purpose));
      decipher.setAuthTag(sealed.subarray(sealed.length - 16));
      try {
        return Buffer.concat([decipher.update(sealed.subarray(13, sealed.length - 16)), decipher.final()]);
      } catch (error) {
        throw new Error("sealed with another key, or changed", { cause: error });
      }
    },
  };
}
