/**
 * Known shapes of secrets, replaced by `[REDACTED:kind]` wherever the proxy writes text it did not
 * write itself into its log: a server's error message or stderr can echo a token it was given.
 * (plugins/redact-secrets.ts applies the same patterns to tool results, as an example plugin that
 * must stand on its own.)
 */
const PATTERNS: readonly [kind: string, pattern: RegExp][] = [
  ["private-key", /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g],
  ["aws-access-key", /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g],
  ["github-token", /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b/g],
  ["gitlab-token", /\bglpat-[A-Za-z0-9_-]{20,}/g],
  ["slack-token", /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g],
  ["google-api-key", /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g],
  ["stripe-key", /\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}\b/g],
  ["npm-token", /\bnpm_[A-Za-z0-9]{36}\b/g],
  ["api-key", /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}\b/g],
  ["jwt", /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b/g],
  ["bearer", /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{16,}/g],
  // scheme://user:password@host: the user stays, the password goes
  ["url-password", /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*:)(?!\[REDACTED:)[^\s/?#@]+(?=@)/gi],
  // A key that ends in password, secret, token, api key, private key or credential(s), with any
  // prefix (DB_PASSWORD, x-api-key, "client_secret"), then = or :, then the value (a quoted one
  // whole). Not "token count" or "max_tokens=" (no such ending), not "password reset" (no = or :).
  [
    "assignment",
    /((?<![\w.-])["']?[\w.-]*?(?:passwords?|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)(?:[_-](?:key|value|hash|b64|base64))?["']?\s*[:=]\s*["']?)(?!\[REDACTED:)(?:(?<=")[^"\r\n]{6,}(?=")|(?<=')[^'\r\n]{6,}(?=')|[^\s"',;]{6,})/gi,
  ],
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
