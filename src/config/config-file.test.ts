import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isProxyError } from "../errors.ts";
import { createDefaultConfig, parseConfigText, readConfigFile } from "./config-file.ts";

describe("the config file", () => {
  test("may be JSONC: line and block comments, trailing commas", () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpproxy-jsonc-"));
    try {
      const path = join(dir, "mcp.json");
      writeFileSync(
        path,
        `{
  // servers I use at work
  "mcpServers": {
    /* the memory server */ "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory",], },
  },
}`,
      );
      expect(readConfigFile(path)).toEqual({
        mcpServers: { memory: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] } },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("plain JSON reads as its JSONC twin does: a __proto__ key an entry of its own, a repeated key its last value", () => {
    const json =
      '{"mcpServers": {"__proto__": {"command": "x"}, "a": {"command": "old"}, "a": {"command": "new", "args": [1, "\\u00e9"]}}}';
    const jsonc = json.replace("{", "{ // a comment\n").replace(/}}}$/, "},},}");
    const plain = parseConfigText(json, "plain.json") as { mcpServers: Record<string, unknown> };
    const commented = parseConfigText(jsonc, "commented.json") as { mcpServers: Record<string, unknown> };
    expect(plain).toEqual(commented);
    expect(Object.keys(plain.mcpServers)).toEqual(["__proto__", "a"]);
    expect(Object.getPrototypeOf(plain.mcpServers)).toBe(Object.prototype);
    expect(plain.mcpServers.a).toEqual({ command: "new", args: [1, "é"] });
  });

  test("anything else that is not JSON is reported with its line and column", () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpproxy-jsonc-"));
    try {
      const path = join(dir, "mcp.json");
      writeFileSync(path, `{\n  "mcpServers": {\n    "a": { "command": "x" }\n    "b": {}\n  }\n}\n`);
      let details: readonly string[] = [];
      try {
        readConfigFile(path);
      } catch (error) {
        if (isProxyError(error)) details = error.details;
      }
      expect(details[0]).toBe("line 4, column 5: a comma was expected");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("one created on a first run is private: the directory 0700, the file 0600", () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpproxy-create-"));
    try {
      const path = join(dir, "home", ".mcpproxy", "mcp_config.json");
      createDefaultConfig(path);
      expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ mcpServers: {} });
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir, "home", ".mcpproxy")).mode & 0o777).toBe(0o700);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
