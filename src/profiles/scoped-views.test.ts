import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openToolCatalog } from "../index/tool-catalog.ts";
import { silentLogger } from "../log.ts";
import { createProfileSelector } from "./profile-selector.ts";
import { scopedCatalog } from "./scoped-views.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: "object" } });

/** 80 strong "issue" tools elsewhere (more than a first narrowed pass asks for), and one weaker one in the profile's server. */
async function catalogWithCrowd() {
  const dataDir = mkdtempSync(join(tmpdir(), "mcpproxy-scoped-"));
  dirs.push(dataDir);
  const catalog = await openToolCatalog({
    dataDir,
    toolNameLimit: 60,
    reservedNames: new Set(),
    logger: silentLogger,
  });
  await catalog.syncServer(
    "crowd",
    Array.from({ length: 80 }, (_, i) =>
      tool(`create_issue_${i}`, `Create an issue in tracker ${i}: issue title, issue body`),
    ),
  );
  await catalog.syncServer("mine", [
    tool("file_issue", "File an issue"),
    tool("weather", "Tell the weather"),
  ]);
  return catalog;
}

test("a profile's search finds its own tools however many stronger ones are outside it", async () => {
  const catalog = await catalogWithCrowd();
  const selector = createProfileSelector({ servers: ["mine"], tags: [], tools: [] }, []);
  const scoped = scopedCatalog(catalog, () => selector);
  const hits = await scoped.search("create an issue", 5);
  expect(hits.map((hit) => hit.tool.name)).toEqual(["mine__file_issue"]);
  // The whole catalog's first five are all the crowd's.
  expect((await catalog.search("create an issue", 5)).every((hit) => hit.tool.server === "crowd")).toBe(true);
  expect(scoped.size()).toBe(2);
  expect(scoped.names()).toEqual(["mine__file_issue", "mine__weather"]);
  expect(scoped.get("crowd__create_issue_1")).toBeUndefined();
  expect(catalog.get("crowd__create_issue_1")).toBeDefined();
  expect(scoped.hasTools("crowd")).toBe(false);
  await catalog.close();
});

test("the limit is applied after narrowing", async () => {
  const catalog = await catalogWithCrowd();
  const selector = createProfileSelector({ servers: ["crowd"], tags: [], tools: ["!*_1*"] }, []);
  const hits = await scopedCatalog(catalog, () => selector).search("create an issue", 7);
  expect(hits).toHaveLength(7);
  expect(hits.some((hit) => /_1\d*$/.test(hit.tool.tool))).toBe(false);
  await catalog.close();
});
