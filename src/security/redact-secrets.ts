/**
 * Known shapes of secrets, replaced by `[REDACTED:kind]` wherever the proxy writes text it did not
 * write itself into its log: a server's error message or stderr can echo a token it was given.
 * (plugins/redact-secrets.ts applies the same patterns to tool results, as an example plugin that
 * must stand on its own.)
 */
const PATTERNS: readonly [kind: string, pattern: RegExp][] = [
  ["private-key", /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g],
  ["aws-access-key", /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g],
  ["github-token", /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b/g],
  ["slack-token", /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g],
  ["api-key", /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}\b/g],
  ["jwt", /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b/g],
  ["bearer", /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{16,}/g],
  ["assignment", /\b((?:password|passwd|secret|api[_-]?key|access[_-]?token)\s*[:=]\s*["']?)[^\s"',;]{6,}/gi],
];

/** The text with every known secret replaced; a captured prefix ("Bearer ", "password=") is kept. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const [kind, pattern] of PATTERNS) {
    out = out.replace(pattern, (match, prefix: unknown) =>
      typeof prefix === "string" && match.startsWith(prefix)
        ? `${prefix}[REDACTED:${kind}]`
        : `[REDACTED:${kind}]`,
    );
  }
  return out;
}
