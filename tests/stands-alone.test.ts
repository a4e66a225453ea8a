import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers.ts";

/**
 * A clone of the repository is all a reader has: no page, script or piece of code may send them to
 * a folder beside it. Only `.ci/` knows where the CI machine keeps the assets too large for the
 * repository, and hands them on through documented variables (README, Development).
 */
test("no tracked file outside .ci/ points to the shared folder beside the clone", () => {
  const files = Bun.spawnSync(["git", "ls-files", "-z"], { cwd: ROOT }).stdout.toString().split("\0");
  expect(files.length).toBeGreaterThan(100);
  const pointing = files.filter((file) => {
    if (file === "" || file.startsWith(".ci/")) return false;
    let text: string;
    try {
      text = readFileSync(join(ROOT, file), "utf8");
    } catch {
      return false; // deleted in the work tree
    }
    return /\.\.\/shared(\/|\b(?!-))/.test(text);
  });
  expect(pointing).toEqual([]);
});
