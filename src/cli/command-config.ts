import { loadConfig, type ResolvedConfig, type SettingOverrides } from "../config/load-config.ts";
import { createLogger, type Logger } from "../log.ts";
import type { CommandValues } from "./command.ts";

/** Loads the config with the flags every command shares plus the command's own setting flags. */
export function loadCommandConfig(
  values: CommandValues,
  extra: SettingOverrides = {},
  /** The config file's content to check instead of the file (an edit, before it is written). */
  text?: string,
): ResolvedConfig {
  const overrides: SettingOverrides = { ...extra };
  if (typeof values["data-dir"] === "string")
    overrides.dataDir = { value: values["data-dir"], flag: "--data-dir" };
  return loadConfig({
    configFlag: typeof values.config === "string" ? values.config : undefined,
    overrides,
    text,
  });
}

export function commandLogger(config: ResolvedConfig): Logger {
  return createLogger({ level: config.logLevel, file: config.logFile || undefined });
}
