import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";
import { ProxyError } from "../errors.ts";

/**
 * The key that encrypts the secrets the shared store holds (OAuth tokens, the requestState key):
 * `MCPPROXY_STORE_KEY`, from the environment only, the same on every replica. What is stored is
 * sealed with AES-256-GCM and bound to what it is (`purpose`), so a sealed value cannot be moved
 * to another row. The store keeps a check value of the key (never the key) so that a replica
 * started with a different key refuses to start instead of reading garbage.
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
}

const VERSION = 1;

/**
 * Accepts 32 bytes as 64 hex characters or base64, or a passphrase of at least 32 characters
 * (stretched with HKDF: a passphrase that long has the entropy, it only needs the shape).
 */
export function storeKeyFrom(env: Readonly<Record<string, string | undefined>>): StoreKey {
  const text = env[STORE_KEY_ENV]?.trim() ?? "";
  if (text === "")
    throw new ProxyError(
      "CONFIG_INVALID",
      `A shared store needs ${STORE_KEY_ENV}: the key that encrypts the OAuth tokens and secrets it keeps, ` +
        "the same on every replica (make one with `openssl rand -hex 32`).",
    );
  return createStoreKey(keyBytesOf(text));
}

function keyBytesOf(text: string): Buffer {
  if (/^[0-9a-f]{64}$/i.test(text)) return Buffer.from(text, "hex");
  const decoded = /^[A-Za-z0-9+/_-]{43}=?$/.test(text) ? Buffer.from(text, "base64") : undefined;
  if (decoded?.length === 32) return decoded;
  if (text.length >= 32)
    return Buffer.from(hkdfSync("sha256", text, "mcpproxy-store", "mcpproxy store key", 32));
  throw new ProxyError(
    "CONFIG_INVALID",
    `${STORE_KEY_ENV} is too short: give 32 bytes as 64 hex characters (\`openssl rand -hex 32\`) or base64, ` +
      "or a passphrase of at least 32 characters.",
  );
}

export function createStoreKey(key: Buffer): StoreKey {
  if (key.length !== 32) throw new Error("a store key is 32 bytes");
  return {
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
