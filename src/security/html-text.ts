import { redactSecrets } from "./redact-secrets.ts";

/**
 * Text as the proxy's pages show it (the status page, the console): escaped for HTML, so what an
 * upstream or an agent wrote is read, never run; an error as its first line, with known secret
 * shapes redacted (older statistics hold errors from before redaction).
 */
export const escapeHtml = (text: unknown) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export const errorLine = (text: string) => redactSecrets(text.split("\n")[0] ?? "");
