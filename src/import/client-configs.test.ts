import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clientFiles, existingFiles } from "./client-configs.ts";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function home() {
  dir = mkdtempSync(join(tmpdir(), "mcpproxy-client-configs-"));
  mkdirSync(join(dir, ".cursor"));
  writeFileSync(join(dir, ".cursor", "mcp.json"), "{}");
  return dir;
}

describe("the client files read", () => {
  test("run from the home directory, Cursor's user and project files are one file: read once, as the user's", () => {
    const at = home();
    const files = clientFiles("cursor", { env: { HOME: at }, cwd: at, platform: "linux" });
    expect(files.map((file) => file.scope)).toEqual(["user", "project"]);
    expect(existingFiles(files)).toEqual([files[0]!]);
  });

  test("a project file that links to the user's file is read once; files that do not exist are left out", () => {
    const at = home();
    const project = join(at, "project");
    mkdirSync(join(project, ".cursor"), { recursive: true });
    symlinkSync(join(at, ".cursor", "mcp.json"), join(project, ".cursor", "mcp.json"));
    const files = clientFiles("cursor", { env: { HOME: at }, cwd: project, platform: "linux" });
    expect(existingFiles(files).map((file) => file.scope)).toEqual(["user"]);
    const elsewhere = clientFiles("cursor", { env: { HOME: at }, cwd: join(at, "none"), platform: "linux" });
    expect(existingFiles(elsewhere).map((file) => file.scope)).toEqual(["user"]);
  });
});
