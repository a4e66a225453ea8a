import { appendFileSync } from "node:fs";
import { redactSecrets } from "./security/redact-secrets.ts";

/**
 * Logging never touches stdout: in stdio mode stdout carries only JSON-RPC. Lines go to stderr,
 * or to MCPPROXY_LOG_FILE when one is set.
 */
export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

export interface Logger {
  error(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  debug(message: string, fields?: Record<string, unknown>): void;
  child(scope: string): Logger;
  /** Whether messages of this level are written: to skip building costly fields on hot paths. */
  enabled(level: LogLevel): boolean;
}

export interface LoggerOptions {
  level: LogLevel;
  file?: string | undefined;
  scope?: string;
}

export function createLogger(options: LoggerOptions): Logger {
  const threshold = LOG_LEVELS.indexOf(options.level);
  const write = (line: string) => {
    // A log names servers, tools and errors: 0600 when this creates it.
    if (options.file) appendFileSync(options.file, `${line}\n`, { mode: 0o600 });
    else process.stderr.write(`${line}\n`);
  };
  const emit = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (LOG_LEVELS.indexOf(level) > threshold) return;
    const scope = options.scope ? ` [${options.scope}]` : "";
    const extra = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : "";
    // Servers' errors and stderr end up in messages, and may echo a token they were given.
    write(redactSecrets(`${new Date().toISOString()} ${level.toUpperCase()}${scope} ${message}${extra}`));
  };
  return {
    error: (message, fields) => emit("error", message, fields),
    warn: (message, fields) => emit("warn", message, fields),
    info: (message, fields) => emit("info", message, fields),
    debug: (message, fields) => emit("debug", message, fields),
    child: (scope) =>
      createLogger({ ...options, scope: options.scope ? `${options.scope}:${scope}` : scope }),
    enabled: (level) => LOG_LEVELS.indexOf(level) <= threshold,
  };
}

/** A logger that drops everything, for library callers and tests that do not care. */
export const silentLogger: Logger = {
  error() {},
  warn() {},
  info() {},
  debug() {},
  child: () => silentLogger,
  enabled: () => false,
};
