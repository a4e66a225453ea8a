import { describeError, isProxyError } from "../errors.ts";

/**
 * What `mcpproxy doctor` checks, each finding one line a user can act on: the config (which file
 * and why), the data dir and its index, every enabled server (started for real), the embedder,
 * the plugins, and whether the user's MCP clients point at mcpproxy.
 */
export interface Finding {
  area: "config" | "data" | "store" | "server" | "embedder" | "plugins" | "client";
  subject: string;
  status: "ok" | "warn" | "fail" | "info";
  detail: string;
  /** What to do about it, for warn and fail. */
  fix?: string;
}

/** Where the checks put what they find. */
export interface Findings {
  push(...found: Finding[]): void;
}

/** An error as one line: a ProxyError's message and its details (each problem it lists). */
export function problemText(error: unknown): string {
  return isProxyError(error)
    ? [error.message.replace(/[.;:\s]+$/, ""), ...error.details].join("; ")
    : describeError(error);
}
