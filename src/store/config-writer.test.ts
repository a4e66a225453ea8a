import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { updateConfigServers } from "./config-writer.ts";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function configFile(text: string) {
  dir = mkdtempSync(join(tmpdir(), "mcpproxy-config-writer-"));
  const path = join(dir, "mcp_config.json");
  writeFileSync(path, text);
  return path;
}

const add = (name: string) => () => [{ name, entry: { url: `http://127.0.0.1:9/${name}` } }];

describe("the backup of an edited config", () => {
  test("rolling: the previous file is kept as .bak, and named", async () => {
    const path = configFile('{ "mcpServers": { "a": { "url": "http://127.0.0.1:9/a" } } }\n');
    const before = readFileSync(path, "utf8");
    const { backup } = await updateConfigServers(path, add("b"), { backupAs: "rolling" });
    expect(backup).toBe(`${path}.bak`);
    expect(readFileSync(`${path}.bak`, "utf8")).toBe(before);
  });

  test("none (the empty file a first run made): no backup written or named", async () => {
    const path = configFile('{\n  "mcpServers": {}\n}\n');
    const { backup, text } = await updateConfigServers(path, add("b"), { backupAs: "none" });
    expect(backup).toBeUndefined();
    expect(existsSync(`${path}.bak`)).toBe(false);
    expect(text).toContain("http://127.0.0.1:9/b");
  });
});
