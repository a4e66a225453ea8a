import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createStoreKey } from "./store-key.ts";

describe("the check value", () => {
  test("identifies the key without being it", () => {
    const bytes = randomBytes(32);
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
