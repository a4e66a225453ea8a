/**
 * Redacts secrets from tool results before the agent (and its provider's logs) see them (the proxy
 * redacts the same shapes from its own log; this file copies its patterns so it stands alone): API keys
 * and tokens of well-known formats (GitHub, GitLab, Slack, Google, Stripe, npm, OpenAI, AWS, JWTs),
 * bearer tokens, private keys, passwords in URLs, and `DB_PASSWORD=`/`"client_secret": ` style
 * assignments. Text blocks, embedded text resources and string values of structuredContent
 * are scanned; images and audio are left alone. Add your own patterns with `patterns` (regular
 * expressions as strings).
 *
 *   "plugins": ["./redact-secrets.ts"]
 *   "plugins": [{ "path": "./redact-secrets.ts", "options": { "patterns": ["ACME-[0-9]{8}"] } }]
 */
import type { ContentBlock, Plugin, ToolResult } from "../src/plugin-api.ts";

const BUILT_IN: [kind: string, pattern: RegExp][] = [
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

let patterns: [string, RegExp][] = BUILT_IN;

export function redact(text: string): string {
  let out = text;
  for (const [kind, pattern] of patterns) {
    // A pattern with a captured prefix keeps the prefix ("Bearer ", "password=") and redacts the rest.
    out = out.replace(pattern, (match, prefix: unknown) =>
      typeof prefix === "string" && match.startsWith(prefix)
        ? `${prefix}[REDACTED:${kind}]`
        : `[REDACTED:${kind}]`,
    );
  }
  return out;
}

function redactValue(value: unknown): unknown {
  if (typeof value === "string") return redact(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactValue(item)]));
  }
  return value;
}

function redactBlock(block: ContentBlock): ContentBlock {
  if (block.type === "text" && typeof block.text === "string") return { ...block, text: redact(block.text) };
  const resource = block.resource as { text?: unknown } | undefined;
  if (block.type === "resource" && typeof resource?.text === "string") {
    return { ...block, resource: { ...resource, text: redact(resource.text) } };
  }
  return block;
}

export default {
  name: "redact-secrets",
  setup({ options }) {
    const extra = (options as { patterns?: unknown } | undefined)?.patterns;
    if (extra !== undefined && (!Array.isArray(extra) || extra.some((p) => typeof p !== "string"))) {
      throw new Error("options.patterns must be an array of regular expressions as strings");
    }
    patterns = [
      ...BUILT_IN,
      ...((extra as string[] | undefined) ?? []).map((p): [string, RegExp] => ["custom", new RegExp(p, "g")]),
    ];
  },
  transformToolResult({ result }) {
    const redacted: ToolResult = { ...result, content: result.content.map(redactBlock) };
    if (result.structuredContent)
      redacted.structuredContent = redactValue(result.structuredContent) as Record<string, unknown>;
    return JSON.stringify(redacted) === JSON.stringify(result) ? undefined : redacted;
  },
} satisfies Plugin;
