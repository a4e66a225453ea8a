import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  argumentsDigest,
  createRequestStateSeal,
  isBoundTo,
  loadOrCreateStateKey,
  REQUEST_STATE_KEY_FILE,
} from "./request-state.ts";

const binding = {
  method: "tools/call",
  server: "github",
  target: "create_issue",
  digest: argumentsDigest({ title: "x", labels: ["a"] }),
  principal: "local",
};

function withDir(run: (dir: string) => void) {
  const dir = mkdtempSync(join(tmpdir(), "request-state-"));
  try {
    run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the sealed requestState", () => {
  test("opens to what was sealed, and hides it from the client", () =>
    withDir((dir) => {
      const seal = createRequestStateSeal(dir, 60_000);
      const state = seal.seal({ ...binding, up: "upstream-secret-state" });
      expect(state).not.toContain("upstream-secret-state");
      expect(Buffer.from(state.slice(11), "base64url").toString()).not.toContain("github");
      expect(seal.open(state)).toMatchObject({ ...binding, up: "upstream-secret-state" });
    }));

  test("refuses a changed byte, a state of another key, and an expired one", () =>
    withDir((dir) => {
      let now = 1_000;
      const seal = createRequestStateSeal(dir, 500, () => now);
      const state = seal.seal(binding);
      // Not the last character: its low bits may be padding, which decodes to the same bytes.
      for (let at = 11; at < state.length - 1; at += 7) {
        const flipped = `${state.slice(0, at)}${state[at] === "A" ? "B" : "A"}${state.slice(at + 1)}`;
        expect(() => seal.open(flipped)).toThrow();
      }
      withDir((other) => expect(() => createRequestStateSeal(other, 500, () => now).open(state)).toThrow());
      now = 1_600;
      expect(() => seal.open(state)).toThrow("expired");
      expect(() => seal.open("not ours")).toThrow("malformed");
    }));

  test("binds every field, and the arguments in any key order", () => {
    expect(isBoundTo(binding, binding)).toBe(true);
    expect(argumentsDigest({ labels: ["a"], title: "x" })).toBe(binding.digest);
    for (const field of ["method", "server", "target", "digest", "principal"] as const) {
      expect(isBoundTo(binding, { ...binding, [field]: `${binding[field]}!` })).toBe(false);
    }
  });

  test("its key is made once, 0600, and never replaced", () =>
    withDir((dir) => {
      const key = loadOrCreateStateKey(dir);
      const path = join(dir, REQUEST_STATE_KEY_FILE);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(loadOrCreateStateKey(dir).equals(key)).toBe(true);
      expect(readFileSync(path).length).toBe(32);
      writeFileSync(path, "short");
      expect(() => loadOrCreateStateKey(dir)).toThrow();
    }));
});
