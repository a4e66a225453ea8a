import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { takeTrayLock } from "./tray-lock.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

test("one tray per data dir: a live holder keeps it, a gone one's file is taken over, release removes it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-tray-lock-"));
  dirs.push(dir);
  const file = join(dir, "tray", "tray.pid");
  const first = takeTrayLock(dir);
  expect(readFileSync(file, "utf8")).toBe(String(process.pid));
  first!.release();
  expect(existsSync(file)).toBe(false);

  const other = Bun.spawn(["sleep", "30"]);
  writeFileSync(file, String(other.pid));
  expect(takeTrayLock(dir)).toBeUndefined();
  other.kill();
  await other.exited;
  const taken = takeTrayLock(dir);
  expect(taken).toBeDefined();
  expect(readFileSync(file, "utf8")).toBe(String(process.pid));
  taken!.release();
  expect(existsSync(file)).toBe(false);
});
