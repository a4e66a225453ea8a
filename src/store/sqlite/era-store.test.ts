import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openCatalogStore } from "./catalog-store.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-eras-"));
  dirs.push(dir);
  return dir;
}

const discover = {
  supportedVersions: ["2026-07-28"],
  capabilities: { tools: {} },
  ttlMs: 0,
  cacheScope: "public",
};

describe("era verdicts in the catalog", () => {
  test("are kept across openings, dated, with a modern server's discover result", () => {
    const dir = tempDir();
    const first = openCatalogStore(dir);
    first.eras.put("modern", {
      era: "modern",
      key: "k1",
      protocolVersion: "2026-07-28",
      discover,
      checkedAt: 1,
    });
    first.eras.put("old", { era: "legacy", key: "k2", protocolVersion: "2025-11-25", checkedAt: 2 });
    first.close();
    const again = openCatalogStore(dir);
    expect(again.eras.get("modern")).toEqual({
      era: "modern",
      key: "k1",
      protocolVersion: "2026-07-28",
      discover,
      checkedAt: 1,
    });
    expect(again.eras.get("old")).toEqual({
      era: "legacy",
      key: "k2",
      protocolVersion: "2025-11-25",
      checkedAt: 2,
    });
    expect(again.eras.get("unknown")).toBeUndefined();
    again.close();
  });

  test("a read-only catalog keeps new verdicts in memory and writes nothing", () => {
    const dir = tempDir();
    openCatalogStore(dir).close();
    const reader = openCatalogStore(dir, { readOnly: true });
    reader.eras.put("s", { era: "legacy", key: "k", checkedAt: 3 });
    expect(reader.eras.get("s")?.era).toBe("legacy");
    reader.close();
    const writer = openCatalogStore(dir);
    expect(writer.eras.get("s")).toBeUndefined();
    writer.close();
  });

  test("the verdicts of servers gone from the config are dropped", () => {
    const store = openCatalogStore(tempDir());
    store.eras.put("kept", { era: "legacy", key: "k", checkedAt: 1 });
    store.eras.put("gone", { era: "legacy", key: "k", checkedAt: 1 });
    store.eras.forgetExcept(new Set(["kept"]));
    expect(store.eras.get("kept")).toBeDefined();
    expect(store.eras.get("gone")).toBeUndefined();
    store.close();
  });

  test("a discover result too large to keep leaves no verdict (the server is probed again)", () => {
    const store = openCatalogStore(tempDir());
    const huge = { ...discover, instructions: "x".repeat(100_000) };
    store.eras.put("big", { era: "modern", key: "k", discover: huge, checkedAt: 1 });
    expect(store.eras.get("big")).toBeUndefined();
    store.close();
  });
});
