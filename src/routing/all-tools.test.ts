import { describe, expect, test } from "bun:test";
import type { ToolCatalog } from "../index/tool-catalog.ts";
import { createAllTools } from "./all-tools.ts";

/** A catalog of `count` tools that counts how often its names are walked; `change` moves its version. */
function catalogOf(count: number) {
  let names = Array.from({ length: count }, (_, i) => `s__t${i}`);
  let version = 1;
  const walks = { count: 0 };
  const catalog = {
    version: () => String(version),
    names: () => {
      walks.count++;
      return names;
    },
    get: (name: string) => (names.includes(name) ? { key: name, server: "s", tool: name } : undefined),
    isQuarantined: () => false,
    shownHash: (tool: { key: string }) => tool.key,
  } as unknown as ToolCatalog;
  const change = (next: string[]) => {
    names = next;
    version++;
  };
  return { catalog, walks, change, names: () => names };
}

describe("all routing's look at the catalog", () => {
  test("walks the tools only when the catalog's version moved, and tells a change then", () => {
    let clock = 0;
    const allTools = createAllTools({ alwaysLoad: 0, now: () => clock });
    const { catalog, walks, change, names } = catalogOf(500);
    expect(allTools.check(catalog)).toBe(false);
    const walked = walks.count;
    for (let i = 0; i < 30; i++) {
      clock += 1_000;
      expect(allTools.check(catalog)).toBe(false);
    }
    expect(walks.count).toBe(walked);

    change(names().slice(1));
    expect(allTools.check(catalog)).toBe(true);
    expect(walks.count).toBeGreaterThan(walked);
    // The same version again: nothing to tell.
    expect(allTools.check(catalog)).toBe(false);
  });
});
