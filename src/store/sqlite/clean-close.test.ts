import { afterEach, describe, expect, test } from "bun:test";
import {
  appendFileSync,
  cpSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CATALOG_FILE, openCatalogStore } from "./catalog-store.ts";
import { isUnchangedSinceCleanClose } from "./clean-close.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function catalogDir(): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-clean-close-"));
  dirs.push(dir);
  return { dir, path: join(dir, CATALOG_FILE) };
}

describe("a catalog closed cleanly", () => {
  test("is known as such until anything touches it, while it is open, or after a close that left its log", () => {
    const { dir, path } = catalogDir();
    const store = openCatalogStore(dir);
    store.approve([{ server: "a", tool: "b", hash: "c" }]);
    expect(isUnchangedSinceCleanClose(path)).toBe(false);
    store.close();
    expect(isUnchangedSinceCleanClose(path)).toBe(true);

    // Open again, and written to: not while it is open; again once it is closed.
    const again = openCatalogStore(dir);
    again.keepApprovedDefinition("s", "t");
    again.approve([{ server: "s", tool: "t", hash: "h" }]);
    expect(isUnchangedSinceCleanClose(path)).toBe(false);
    // Another process reading it keeps its log: its close records nothing.
    const reader = openCatalogStore(dir, { readOnly: true });
    reader.close();
    expect(isUnchangedSinceCleanClose(path)).toBe(false);
    again.close();
    expect(isUnchangedSinceCleanClose(path)).toBe(true);

    // Touched since, its bytes as they were (a copy, a restore): still the file closed cleanly.
    utimesSync(path, new Date(), new Date(Date.now() + 5_000));
    expect(isUnchangedSinceCleanClose(path)).toBe(true);
    // Its bytes changed since, at the same size: checked again.
    const bytes = readFileSync(path);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    writeFileSync(path, bytes);
    expect(isUnchangedSinceCleanClose(path)).toBe(false);
  });

  test("a copy of it, as a copied or restored data dir holds, is known as the one closed cleanly", () => {
    const { dir, path } = catalogDir();
    const store = openCatalogStore(dir);
    store.approve([{ server: "s", tool: "t", hash: "h" }]);
    store.close();
    const copy = catalogDir();
    cpSync(dir, copy.dir, { recursive: true });
    expect(isUnchangedSinceCleanClose(copy.path)).toBe(true);
    // A copy that grew since is not.
    appendFileSync(copy.path, Buffer.alloc(4096));
    expect(isUnchangedSinceCleanClose(copy.path)).toBe(false);
    expect(isUnchangedSinceCleanClose(path)).toBe(true);
  });

  test("damaged after its clean close, it is still found damaged at open", () => {
    const { dir, path } = catalogDir();
    const store = openCatalogStore(dir);
    store.approve([{ server: "s", tool: "t", hash: "h" }]);
    store.close();
    expect(isUnchangedSinceCleanClose(path)).toBe(true);
    const bytes = readFileSync(path);
    writeFileSync(path, Buffer.concat([bytes.subarray(0, 4096), Buffer.alloc(bytes.length - 4096, 0xa5)]));
    expect(() => openCatalogStore(dir)).toThrow(/damaged|Run `mcpproxy index`/);
  });
});
