import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProxyError } from "../errors.ts";
import { dataDirFailure, probeDataDir } from "./data-dir-access.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-data-dir-"));
  dirs.push(dir);
  return dir;
}
const failed = (code: string, path = "/d/catalog.db") =>
  Object.assign(new Error(`${code}: it failed`), code.startsWith("SQLITE") ? { code } : { code, path });

describe("probeDataDir", () => {
  test("a writable dir, made when missing, with no probe left behind", () => {
    const dir = join(tempDir(), "data");
    expect(probeDataDir(dir)).toEqual({ writable: true });
    expect(readdirSync(dir)).toEqual([]);
  });

  test("a path through a file is a ProxyError that says to give a directory", () => {
    const file = join(tempDir(), "file");
    writeFileSync(file, "x");
    expect(() => probeDataDir(join(file, "data"))).toThrow(/cannot be made: ENOTDIR.*Give serve a directory/);
  });
});

describe("dataDirFailure", () => {
  test("a full disk, by the file system or by SQLite, says so and what to do", () => {
    for (const code of ["ENOSPC", "EDQUOT", "SQLITE_FULL"]) {
      const error = dataDirFailure(failed(code), "/d");
      expect(error?.code).toBe("DATA_DIR_UNWRITABLE");
      expect(error?.message).toContain("The disk of the data dir /d is full");
      expect(error?.message).toContain("--data-dir, MCPPROXY_DATA_DIR");
    }
  });

  test("a read-only one too", () => {
    for (const code of ["EROFS", "EACCES", "EPERM", "SQLITE_READONLY", "SQLITE_READONLY_DIRECTORY"]) {
      expect(dataDirFailure(failed(code), "/d")?.message).toMatch(
        /^Could not write to the data dir \/d .*make it writable/,
      );
    }
  });

  test("other errors, those of paths elsewhere (a port, a command), and ProxyErrors are left as they are", () => {
    expect(dataDirFailure(failed("EACCES", "/usr/bin/tool"), "/d")).toBeUndefined();
    expect(
      dataDirFailure(Object.assign(new Error("listen EACCES"), { code: "EACCES" }), "/d"),
    ).toBeUndefined();
    expect(dataDirFailure(failed("ENOSPC", "/data"), "/d")).toBeUndefined();
    expect(dataDirFailure(failed("ECONNREFUSED"), "/d")).toBeUndefined();
    expect(dataDirFailure(new Error("boom"), "/d")).toBeUndefined();
    expect(dataDirFailure(new ProxyError("USAGE", "no"), "/d")).toBeUndefined();
  });
});
