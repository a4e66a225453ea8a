import { describe, expect, test } from "bun:test";
import { redact as redactInPlugin } from "../../plugins/redact-secrets.ts";
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

  test("redacts a value whose key ends in a secret word after any prefix (db_password=, regression)", () => {
    expect(redactSecrets("db_password=secretvalue")).toBe("db_password=[REDACTED:assignment]");
    expect(redactSecrets("DB_PASSWORD=hunter22 GITHUB_TOKEN=abcdef123456")).toBe(
      "DB_PASSWORD=[REDACTED:assignment] GITHUB_TOKEN=[REDACTED:assignment]",
    );
    expect(redactSecrets("x-api-key: abcdef123456")).toBe("x-api-key: [REDACTED:assignment]");
    expect(redactSecrets("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENG")).toBe(
      "AWS_SECRET_ACCESS_KEY=[REDACTED:assignment]",
    );
    expect(redactSecrets("--api-key=abcdef123456 accessToken: abcdef123456 private_key=abcdef123456")).toBe(
      "--api-key=[REDACTED:assignment] accessToken: [REDACTED:assignment] private_key=[REDACTED:assignment]",
    );
    expect(redactSecrets("credentials=user:pass123 passwd = letmein99")).toBe(
      "credentials=[REDACTED:assignment] passwd = [REDACTED:assignment]",
    );
  });

  test("redacts JSON-style quoted values whole, spaces included", () => {
    expect(redactSecrets('{"client_secret": "abc123def456", "password":"correct horse battery"}')).toBe(
      '{"client_secret": "[REDACTED:assignment]", "password":"[REDACTED:assignment]"}',
    );
    expect(redactSecrets("{'api_key': 'abcdef123456'}")).toBe("{'api_key': '[REDACTED:assignment]'}");
  });

  test("redacts the token formats of GitHub, GitLab, Slack, Google, Stripe and npm", () => {
    const github = `github_pat_${"A1b2C3d4E5".repeat(3)}_${"x".repeat(20)}`;
    const gitlab = "glpat-abcdefghij0123456789";
    const slack = "xoxb-1234567890-abcdefghij";
    const google = "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6q"; // AIza and 35 more
    const stripe = "sk_live_abcdefghijklmnop1234 rk_live_abcdefghijklmnop1234";
    const npm = `npm_${"a1B2c3D4e5".repeat(3)}abcdef`;
    expect(redactSecrets(`${github} ${gitlab} ${slack} ${google} ${stripe} ${npm}`)).toBe(
      "[REDACTED:github-token] [REDACTED:gitlab-token] [REDACTED:slack-token] [REDACTED:google-api-key] " +
        "[REDACTED:stripe-key] [REDACTED:stripe-key] [REDACTED:npm-token]",
    );
  });

  test("redacts the password of a URL and keeps the user and host", () => {
    expect(redactSecrets("cloning https://user:s3cret@example.com/repo.git")).toBe(
      "cloning https://user:[REDACTED:url-password]@example.com/repo.git",
    );
    expect(redactSecrets("postgres://app:pw@db:5432/app")).toBe(
      "postgres://app:[REDACTED:url-password]@db:5432/app",
    );
    expect(redactSecrets("see https://example.com:8443/path and git@github.com:org/repo")).toBe(
      "see https://example.com:8443/path and git@github.com:org/repo",
    );
  });

  test("does not redact a token already redacted by a more specific pattern a second time", () => {
    expect(redactSecrets("GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789")).toBe(
      "GITHUB_TOKEN=[REDACTED:github-token]",
    );
  });

  test("leaves ordinary words about tokens, passwords and secrets alone", () => {
    for (const text of [
      "token count: 1234",
      "max_tokens=100000 tokens: 2048 token_count=123456",
      "password reset email sent to the user",
      "the secret sauce is caching; secret_sauce=caching",
      "passwordless: enabled",
      "Secret: the recipe",
      "tokenizer=whitespace",
    ]) {
      expect(redactSecrets(text)).toBe(text);
    }
  });
});

describe("plugins/redact-secrets.ts", () => {
  test("redacts exactly as the proxy does (its patterns are a copy)", () => {
    const text =
      'db_password=secretvalue {"client_secret": "abc 123 def"} https://u:p@h glpat-abcdefghij0123456789 ' +
      "sk_live_abcdefghijklmnop1234 token count: 12 Bearer abcdefghijklmnop0123";
    expect(redactInPlugin(text)).toBe(redactSecrets(text));
  });
});
