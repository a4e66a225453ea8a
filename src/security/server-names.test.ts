import { describe, expect, test } from "bun:test";
import { RESERVED_TOOL_NAMES } from "../server/tools/builtin-tools.ts";
import { RESERVED_SERVER_NAMES, serverNameProblem, usableServerName } from "./server-names.ts";

describe("server names", () => {
  test("the built-in tools' names are reserved server names", () => {
    for (const name of RESERVED_TOOL_NAMES) expect(RESERVED_SERVER_NAMES.has(name)).toBe(true);
  });

  test("names objects already have, paths, control characters and line breaks are refused", () => {
    for (const name of ["__proto__", "constructor", "valueOf", "toString", "a/b", "x\ny", "tab\there", ""]) {
      expect(serverNameProblem(name)).toBeDefined();
    }
    for (const name of ["github", "My Server", "github-cursor", "ünïcödé", "a.b_c-d"]) {
      expect(serverNameProblem(name)).toBeUndefined();
    }
  });

  test("bidi controls and other invisible characters are refused, by code point", () => {
    for (const char of [
      "\u202A",
      "\u202B",
      "\u202C",
      "\u202D",
      "\u202E",
      "\u2066",
      "\u2067",
      "\u2068",
      "\u2069",
    ]) {
      expect(serverNameProblem(`git${char}hub`)).toBe(
        `a server name must not contain invisible or text-direction characters (U+${char.charCodeAt(0).toString(16).toUpperCase()})`,
      );
    }
    expect(serverNameProblem("git\u200bhub")).toMatch(/U\+200B/);
    expect(serverNameProblem("notes\u{E0041}")).toMatch(/U\+E0041/);
    // An emoji's own joiner is not hidden text.
    expect(serverNameProblem("dev 👩\u200D💻")).toBeUndefined();
  });

  test("results, in any case, is reserved: mcpproxy://results/<id> is a kept large result, never a server's resource", () => {
    for (const name of ["results", "Results", "RESULTS"]) expect(serverNameProblem(name)).toMatch(/reserved/);
    expect(usableServerName("Results")).toBe("Results-server");
    expect(serverNameProblem("results-archive")).toBeUndefined();
  });

  test("an imported name that cannot be used is made one that can", () => {
    expect(usableServerName("acme/notes")).toBe("acme-notes");
    expect(usableServerName("constructor")).toBe("constructor-server");
    expect(usableServerName("two\nlines")).toBe("two-lines");
    expect(usableServerName("acme\u202Egnp\u202C notes")).toBe("acmegnp notes");
    for (const name of [
      "acme/notes",
      "constructor",
      "two\nlines",
      "__proto__",
      "/",
      "\u2066x\u2069",
      "\u202E",
    ]) {
      expect(serverNameProblem(usableServerName(name))).toBeUndefined();
    }
  });
});
