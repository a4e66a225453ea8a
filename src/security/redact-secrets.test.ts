import { describe, expect, test } from "bun:test";
import { redactSecrets } from "./redact-secrets.ts";

describe("redactSecrets", () => {
  test("replaces known token shapes and keeps the text around them", () => {
    const text =
      "auth failed for ghp_abcdefghijklmnopqrstuvwxyz0123456789 with header Authorization: Bearer abc.def-ghi_jkl.mnopqrstu; " +
      "key AKIAABCDEFGHIJKLMNOP, password=hunter2hunter2 and sk-proj-abcdefghijklmnopqrstuv";
    expect(redactSecrets(text)).toBe(
      "auth failed for [REDACTED:github-token] with header Authorization: Bearer [REDACTED:bearer]; " +
        "key [REDACTED:aws-access-key], password=[REDACTED:assignment] and [REDACTED:api-key]",
    );
  });

  test("leaves ordinary text alone", () => {
    const text = "connected (13 tools); re-indexed github after its tool list changed";
    expect(redactSecrets(text)).toBe(text);
  });
});
