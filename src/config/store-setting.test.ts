import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { literalPasswordProblem, StoreSchema, storeLocationOf } from "./store-setting.ts";

describe("the store setting", () => {
  test("takes nothing (the data dir alone) or a postgres:// or postgresql:// URL", () => {
    for (const text of ["", "  ", "postgres://u@db:5432/x", "postgresql://u:p@10.0.0.1/x?sslmode=require"])
      expect(v.safeParse(StoreSchema, text).success).toBe(true);
  });

  test("refuses another scheme, a URL without a host, and text that is no URL", () => {
    for (const text of ["mysql://u@db/x", "http://db:5432/x", "postgres:///x", "db:5432", "sqlite:data.db"]) {
      const parsed = v.safeParse(StoreSchema, text);
      expect(parsed.success).toBe(false);
      expect(parsed.issues?.[0]?.message).toContain("postgres://");
    }
  });

  test("a location shows its URL with the password masked", () => {
    expect(storeLocationOf("")).toEqual({ kind: "local" });
    const location = storeLocationOf("postgres://app:hunter2@db:5432/mcp");
    expect(location).toMatchObject({ kind: "postgres", url: "postgres://app:hunter2@db:5432/mcp" });
    expect(location.kind === "postgres" && location.shown).toBe("postgres://app:***@db:5432/mcp");
  });

  test("a password written into the file as it is is a problem; ${VAR}, no password, or no URL are not", () => {
    expect(literalPasswordProblem("postgres://app:hunter2@db/mcp")).toContain("password written as it is");
    expect(literalPasswordProblem("postgres://app:${PGPASSWORD}@db/mcp")).toBeUndefined();
    expect(literalPasswordProblem("${MCPPROXY_DB_URL}")).toBeUndefined();
    expect(literalPasswordProblem("postgres://app@db/mcp")).toBeUndefined();
    expect(literalPasswordProblem(undefined)).toBeUndefined();
    expect(literalPasswordProblem("")).toBeUndefined();
  });
});
