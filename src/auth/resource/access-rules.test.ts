import { describe, expect, test } from "bun:test";
import type { AccessRule } from "../../config/http-auth-config.ts";
import { accessRuleFor, scopesOf } from "./access-rules.ts";

describe("accessRuleFor", () => {
  const rules: AccessRule[] = [
    { match: { sub: "alice" }, profile: "dev" },
    { match: { groups: "ops", scope: "mcp:admin" }, callsPerMinute: 5 },
    { match: { scope: "mcp:read" }, profile: "read" },
  ];

  test("serves everyone the whole proxy when there are no rules", () => {
    expect(accessRuleFor({ sub: "anyone" }, [])).toEqual({ match: {} });
  });

  test("takes the first rule whose every claim matches", () => {
    expect(accessRuleFor({ sub: "alice", scope: "mcp:read" }, rules)?.profile).toBe("dev");
    expect(accessRuleFor({ sub: "bob", groups: ["eng", "ops"], scope: "mcp:admin mcp:read" }, rules)).toBe(
      rules[1],
    );
  });

  test("does not match part of a claim: one of two entries missing, or a value that is only a prefix", () => {
    expect(accessRuleFor({ sub: "bob", groups: ["ops"], scope: "mcp:reader" }, rules)).toBeUndefined();
    expect(accessRuleFor({ sub: "alicia" }, rules)).toBeUndefined();
  });

  test("refuses a principal no rule names", () => {
    expect(accessRuleFor({ sub: "mallory", groups: "eng" }, rules)).toBeUndefined();
  });
});

describe("scopesOf", () => {
  test("reads a space-separated scope, or an scp array", () => {
    expect(scopesOf({ scope: "a  b" })).toEqual(["a", "b"]);
    expect(scopesOf({ scp: ["a", 1, "c"] })).toEqual(["a", "c"]);
    expect(scopesOf({})).toEqual([]);
  });
});
