import { hkdfSync, randomBytes, scrypt } from "node:crypto";
import { ProxyError } from "../errors.ts";
import { createStoreKey, STORE_KEY_ENV, type StoreKey } from "./store-key.ts";

/**
 * From what `MCPPROXY_STORE_KEY` holds to the 32 bytes that seal the store's secrets. 32 random
 * bytes (64 hex characters or base64) are the key as they are: nothing to guess. A passphrase is
 * stretched with scrypt (memory-hard: each guess costs what it costs here) under a salt and
 * parameters the store keeps beside the key's check value (`mcpproxy.meta`, store-key-records.ts),
 * so that whoever reads the store cannot test guesses of it fast, and the cost can be raised later
 * (`mcpproxy store rekey` stretches it again with the parameters of the day). A store set up by an
 * mcpproxy before that has no parameters: its passphrase is read as it was then (HKDF alone, fast
 * to guess), and the key says so (`derivation: "legacy-hkdf"`) for `store rekey` to be suggested.
 */
export type StoreSecret = { kind: "random"; bytes: Buffer } | { kind: "passphrase"; text: string };

/** The variable `mcpproxy store rekey` reads the key to move to from. */
export const NEW_STORE_KEY_ENV = "MCPPROXY_STORE_NEW_KEY";

const MAKE_ONE = "`openssl rand -hex 32`";

export function storeSecretFrom(
  env: Readonly<Record<string, string | undefined>>,
  name: string = STORE_KEY_ENV,
): StoreSecret {
  const text = env[name]?.trim() ?? "";
  if (text === "")
    throw new ProxyError(
      "CONFIG_INVALID",
      `A shared store needs ${name}: the key that encrypts the OAuth tokens and secrets it keeps, ` +
        `the same on every replica (make one with ${MAKE_ONE}).`,
    );
  if (/^[0-9a-f]{64}$/i.test(text)) return { kind: "random", bytes: Buffer.from(text, "hex") };
  const decoded = /^[A-Za-z0-9+/_-]{43}=?$/.test(text) ? Buffer.from(text, "base64") : undefined;
  if (decoded?.length === 32) return { kind: "random", bytes: decoded };
  if (text.length >= 32) return { kind: "passphrase", text };
  throw new ProxyError(
    "CONFIG_INVALID",
    `${name} is too short: give 32 random bytes as 64 hex characters (${MAKE_ONE}) or base64, ` +
      "or a passphrase of at least 32 characters.",
  );
}

/** How a passphrase is stretched in one store: scrypt's cost (n), block size (r), parallelism (p), salt. */
export interface KdfParams {
  kdf: "scrypt";
  n: number;
  r: number;
  p: number;
  /** 16 random bytes or more, base64. */
  salt: string;
}

/**
 * The parameters a new store (or `store rekey`) records: OWASP's minimum for scrypt, 128 MiB and a
 * few tenths of a second once per process start (never per call); a random key costs nothing.
 */
export const KDF_DEFAULTS = { n: 2 ** 17, r: 8, p: 1 } as const;

export function newKdfParams(): KdfParams {
  return { kdf: "scrypt", ...KDF_DEFAULTS, salt: randomBytes(16).toString("base64") };
}

/**
 * Bounds on what the store may ask: whoever can write it must not make a replica compute a check
 * value cheap to guess against (a floor), nor run it out of memory (a ceiling).
 */
const MIN_N = 2 ** 15;
const MAX_MEMORY = 512 * 1024 * 1024;

/** The parameters as the store keeps them (JSON); a ProxyError for anything outside the bounds. */
export function kdfParamsFrom(text: string): KdfParams {
  let value: Partial<KdfParams> | undefined;
  try {
    value = JSON.parse(text) as Partial<KdfParams>;
  } catch {
    value = undefined;
  }
  const { n, r, p, salt } = value ?? {};
  const isPowerOfTwo = (x: unknown): x is number =>
    typeof x === "number" && Number.isInteger(x) && x > 1 && (x & (x - 1)) === 0;
  const isSmall = (x: unknown, max: number): x is number =>
    typeof x === "number" && Number.isInteger(x) && x >= 1 && x <= max;
  const saltBytes = typeof salt === "string" ? Buffer.from(salt, "base64").length : 0;
  if (
    value?.kdf !== "scrypt" ||
    !isPowerOfTwo(n) ||
    n < MIN_N ||
    !isSmall(r, 32) ||
    r < 8 ||
    !isSmall(p, 16) ||
    scryptMemory(n, r) > MAX_MEMORY ||
    saltBytes < 16 ||
    saltBytes > 64
  ) {
    throw new ProxyError(
      "CONFIG_INVALID",
      "The shared store's key parameters (mcpproxy.meta, store_key_kdf) are not ones this mcpproxy uses " +
        `(scrypt, n a power of two from ${MIN_N}, r 8 to 32, p 1 to 16, at most ${MAX_MEMORY / 2 ** 20} MiB, ` +
        "a salt of 16 to 64 bytes): the store was changed by hand or by a newer mcpproxy.",
    );
  }
  return { kdf: "scrypt", n, r, p, salt: salt as string };
}

/** The key a secret stands for in a store with these parameters (none: a store set up before them). */
export async function deriveStoreKey(secret: StoreSecret, params: KdfParams | undefined): Promise<StoreKey> {
  if (secret.kind === "random") return createStoreKey(secret.bytes, "random");
  if (!params) {
    return createStoreKey(
      Buffer.from(hkdfSync("sha256", secret.text, "mcpproxy-store", "mcpproxy store key", 32)),
      "legacy-hkdf",
    );
  }
  const key = await new Promise<Buffer>((resolve, reject) =>
    scrypt(
      secret.text.normalize("NFC"),
      Buffer.from(params.salt, "base64"),
      32,
      { N: params.n, r: params.r, p: params.p, maxmem: scryptMemory(params.n, params.r) + 32 * 1024 * 1024 },
      (error, derived) => (error ? reject(error) : resolve(derived)),
    ),
  );
  return createStoreKey(key, "scrypt");
}

function scryptMemory(n: number, r: number): number {
  return 128 * n * r;
}
