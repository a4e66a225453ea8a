import { isProxyError } from "../errors.ts";
import { parseConfig, type SettingOverrides } from "./load-config.ts";

/**
 * For the config tests (imported by *.test.ts only): a config parsed from an object as the file
 * would hold it, with a plain environment, and the problems a bad one reports.
 */
export const parseTestConfig = (
  raw: unknown,
  env: Record<string, string> = {},
  overrides: SettingOverrides = {},
) => parseConfig(raw, { configPath: "/cfg.json", env: { HOME: "/home/u", ...env }, cwd: "/work", overrides });

/** The `path: message` lines of the config error `run` throws; fails when it throws none. */
export function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (isProxyError(error)) return [...error.details];
    throw error;
  }
  throw new Error("expected a config error");
}
