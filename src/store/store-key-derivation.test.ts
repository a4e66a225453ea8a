import { describe, expect, test } from "bun:test";
import { createHmac, hkdfSync, randomBytes, scryptSync } from "node:crypto";
import { ProxyError } from "../errors.ts";
import { createStoreKey, STORE_KEY_ENV } from "./store-key.ts";
import {
  deriveStoreKey,
  KDF_DEFAULTS,
  type KdfParams,
  kdfParamsFrom,
  newKdfParams,
  type StoreSecret,
  storeSecretFrom,
} from "./store-key-derivation.ts";

const secretOf = (text: string | undefined) => storeSecretFrom({ [STORE_KEY_ENV]: text });

function refusal(run: () => unknown): ProxyError {
  try {
    run();
  } catch (error) {
    if (error instanceof ProxyError) return error;
    throw error;
  }
  throw new Error("it was accepted");
}

const PHRASE = "correct horse battery staple, and more of it";

describe("MCPPROXY_STORE_KEY", () => {
  test("32 random bytes as hex, base64 or base64url are one key, used as they are", async () => {
    const bytes = randomBytes(32);
    const forms = [
      bytes.toString("hex"),
      bytes.toString("hex").toUpperCase(),
      bytes.toString("base64"),
      bytes.toString("base64url"),
      `  ${bytes.toString("hex")}\n`,
    ];
    for (const form of forms) {
      const secret = secretOf(form);
      expect(secret).toEqual({ kind: "random", bytes });
      // Parameters or none, a random key is not stretched.
      for (const params of [undefined, newKdfParams()]) {
        const key = await deriveStoreKey(secret, params);
        expect(key.check).toBe(createStoreKey(bytes).check);
        expect(key.derivation).toBe("random");
      }
    }
  });

  test("a missing or empty key is CONFIG_INVALID and says how to make one", () => {
    for (const text of [undefined, "", "   "]) {
      const error = refusal(() => secretOf(text));
      expect(error.code).toBe("CONFIG_INVALID");
      expect(error.message).toContain("needs MCPPROXY_STORE_KEY");
      expect(error.message).toContain("openssl rand -hex 32");
    }
  });

  test("a key shorter than 32 characters is refused (16 bytes in base64, say)", () => {
    for (const text of ["short", "0123456789abcdef", "x".repeat(31), randomBytes(16).toString("base64")]) {
      const error = refusal(() => secretOf(text));
      expect(error.code).toBe("CONFIG_INVALID");
      expect(error.message).toContain("too short");
    }
  });

  test("a passphrase is stretched with scrypt under the store's salt and parameters: what a guess costs", async () => {
    const secret = secretOf(PHRASE);
    expect(secret).toEqual({ kind: "passphrase", text: PHRASE });
    const params = newKdfParams();
    const key = await deriveStoreKey(secret, params);
    expect(key.derivation).toBe("scrypt");
    const expected = scryptSync(PHRASE, Buffer.from(params.salt, "base64"), 32, {
      N: params.n,
      r: params.r,
      p: params.p,
      maxmem: 256 * 1024 * 1024,
    });
    expect(key.check).toBe(createStoreKey(expected).check);
    // The same passphrase and salt: the same key; another salt or passphrase: another one.
    expect((await deriveStoreKey(secret, params)).check).toBe(key.check);
    expect((await deriveStoreKey(secret, newKdfParams())).check).not.toBe(key.check);
    expect((await deriveStoreKey(secretOf(`${PHRASE}!`), params)).check).not.toBe(key.check);
    // Not the fast derivation of before.
    expect(key.check).not.toBe((await deriveStoreKey(secret, undefined)).check);
    expect(key.open(key.seal(Buffer.from("x"), "p"), "p").toString()).toBe("x");
  });

  test("without parameters (a store set up before them) a passphrase is read as it was then, and says so", async () => {
    const key = await deriveStoreKey(secretOf(PHRASE), undefined);
    const then = Buffer.from(hkdfSync("sha256", PHRASE, "mcpproxy-store", "mcpproxy store key", 32));
    expect(key.check).toBe(
      createHmac("sha256", then).update("mcpproxy store key check").digest("hex").slice(0, 32),
    );
    expect(key.derivation).toBe("legacy-hkdf");
  });
});

describe("the key parameters a store keeps", () => {
  test("new ones are the defaults with a salt of their own, and read back as they are", () => {
    const params = newKdfParams();
    expect(params).toMatchObject({ kdf: "scrypt", ...KDF_DEFAULTS });
    expect(Buffer.from(params.salt, "base64")).toHaveLength(16);
    expect(newKdfParams().salt).not.toBe(params.salt);
    expect(kdfParamsFrom(JSON.stringify(params))).toEqual(params);
  });

  test("anything too cheap to guess against, too costly to run, or not scrypt is refused", () => {
    const good: KdfParams = newKdfParams();
    const bad: unknown[] = [
      { ...good, kdf: "pbkdf2" },
      { ...good, n: 1024 },
      { ...good, n: 100_000 },
      { ...good, r: 1 },
      { ...good, p: 0 },
      { ...good, n: 2 ** 20 }, // 1 GiB with r = 8
      { ...good, salt: randomBytes(8).toString("base64") },
      { ...good, salt: 42 },
    ];
    for (const params of bad) {
      const error = refusal(() => kdfParamsFrom(JSON.stringify(params)));
      expect(error.code).toBe("CONFIG_INVALID");
      expect(error.message).toContain("store_key_kdf");
    }
    expect(refusal(() => kdfParamsFrom("not json")).code).toBe("CONFIG_INVALID");
  });

  test("the parameters do not touch a random key's secret", async () => {
    const secret: StoreSecret = { kind: "random", bytes: randomBytes(32) };
    expect((await deriveStoreKey(secret, newKdfParams())).check).toBe(createStoreKey(secret.bytes).check);
  });
});
