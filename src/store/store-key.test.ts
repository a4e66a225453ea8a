import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { ProxyError } from "../errors.ts";
import { createStoreKey, STORE_KEY_ENV, storeKeyFrom } from "./store-key.ts";

const keyOf = (text: string | undefined) => storeKeyFrom({ [STORE_KEY_ENV]: text });

function refusal(text: string | undefined): ProxyError {
  try {
    keyOf(text);
  } catch (error) {
    if (error instanceof ProxyError) return error;
    throw error;
  }
  throw new Error(`${JSON.stringify(text)} was accepted`);
}

describe("MCPPROXY_STORE_KEY", () => {
  const bytes = randomBytes(32);

  test("is read as 64 hex characters, base64 or base64url of the same 32 bytes: one key", () => {
    const hex = keyOf(bytes.toString("hex"));
    expect(keyOf(bytes.toString("hex").toUpperCase()).check).toBe(hex.check);
    expect(keyOf(bytes.toString("base64")).check).toBe(hex.check);
    expect(keyOf(bytes.toString("base64url")).check).toBe(hex.check);
    expect(keyOf(`  ${bytes.toString("hex")}\n`).check).toBe(hex.check);
    expect(hex.check).toBe(createStoreKey(bytes).check);
  });

  test("a passphrase of 32 characters or more is accepted and stretched; the same passphrase is the same key", () => {
    const phrase = "correct horse battery staple, and more";
    expect(keyOf(phrase).check).toBe(keyOf(phrase).check);
    expect(keyOf(phrase).check).not.toBe(keyOf(`${phrase}!`).check);
    expect(
      keyOf(phrase)
        .open(keyOf(phrase).seal(Buffer.from("x"), "p"), "p")
        .toString(),
    ).toBe("x");
  });

  test("a missing or empty key is CONFIG_INVALID and says how to make one", () => {
    for (const text of [undefined, "", "   "]) {
      const error = refusal(text);
      expect(error.code).toBe("CONFIG_INVALID");
      expect(error.message).toContain("needs MCPPROXY_STORE_KEY");
      expect(error.message).toContain("openssl rand -hex 32");
    }
  });

  test("a key shorter than 32 characters is refused (16 bytes in base64, say)", () => {
    for (const text of ["short", "0123456789abcdef", "x".repeat(31), randomBytes(16).toString("base64")]) {
      const error = refusal(text);
      expect(error.code).toBe("CONFIG_INVALID");
      expect(error.message).toContain("too short");
    }
  });

  test("the check value identifies the key without being it", () => {
    const key = createStoreKey(bytes);
    expect(key.check).toMatch(/^[0-9a-f]{32}$/);
    expect(bytes.toString("hex")).not.toContain(key.check);
    expect(createStoreKey(randomBytes(32)).check).not.toBe(key.check);
  });
});

describe("a sealed value", () => {
  const key = createStoreKey(randomBytes(32));
  const plain = Buffer.from("refresh-token-123");

  test("opens with the same key and purpose, and is never the plain text", () => {
    const sealed = key.seal(plain, "oauth:github");
    expect(sealed.includes(plain)).toBe(false);
    expect(key.open(sealed, "oauth:github").equals(plain)).toBe(true);
    // A fresh nonce each time: the same secret does not seal to the same bytes.
    expect(key.seal(plain, "oauth:github").equals(sealed)).toBe(false);
  });

  test("changed anywhere (version, nonce, body, tag) is refused", () => {
    const sealed = key.seal(plain, "oauth:github");
    for (const at of [0, 1, 13, sealed.length - 1]) {
      const changed = Buffer.from(sealed);
      changed[at] = (changed[at] ?? 0) ^ 0x01;
      expect(() => key.open(changed, "oauth:github")).toThrow();
    }
    expect(() => key.open(sealed.subarray(0, 20), "oauth:github")).toThrow("not a sealed value");
  });

  test("moved to another purpose (another row) is refused", () => {
    const sealed = key.seal(plain, "oauth:github");
    expect(() => key.open(sealed, "oauth:gitlab")).toThrow("sealed with another key, or changed");
    expect(() => key.open(sealed, "meta:request_state_key")).toThrow();
  });

  test("sealed with another key is refused", () => {
    const other = createStoreKey(randomBytes(32));
    expect(() => other.open(key.seal(plain, "p"), "p")).toThrow("sealed with another key, or changed");
  });
});
