import { describe, expect, test } from "bun:test";
import { analyze, splitIdentifier, tokenize } from "./tokenizer.ts";

describe("tokenize", () => {
  test("splits snake_case, kebab-case, camelCase and acronyms into lowercase words", () => {
    expect(tokenize("list_pull_requests")).toEqual(["list", "pull", "requests"]);
    expect(tokenize("get-file-contents")).toEqual(["get", "file", "contents"]);
    expect(tokenize("getHTTPResponseCode")).toEqual(["get", "http", "response", "code"]);
    expect(tokenize("searchRepos2Fast")).toEqual(["search", "repos2", "fast"]);
  });

  test("drops punctuation and keeps non-ASCII letters", () => {
    expect(tokenize("Create an issue (GitHub), then: café!")).toEqual([
      "create",
      "an",
      "issue",
      "git",
      "hub",
      "then",
      "café",
    ]);
  });

  test("splitIdentifier joins the words with spaces", () => {
    expect(splitIdentifier("server-everything__getTinyImage")).toBe("server everything get tiny image");
  });
});

describe("analyze", () => {
  test("keeps each word as written and as its stem, and drops stop words", () => {
    expect(analyze("Lists the records")).toEqual(["lists", "~list", "records", "~record"]);
    expect(analyze("get a record")).toEqual(["get", "~get", "record", "~record"]);
  });
});
