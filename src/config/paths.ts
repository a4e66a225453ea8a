import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

/** The user's home: $HOME first, so tests and sandboxes can point it elsewhere. */
export function homeDir(env: Readonly<Record<string, string | undefined>>): string {
  return env.HOME || env.USERPROFILE || homedir();
}

export function defaultDataDir(env: Readonly<Record<string, string | undefined>>): string {
  return join(homeDir(env), ".mcpproxy");
}

/**
 * The data dir the environment names (MCPPROXY_DATA_DIR, expanded as the loader expands it), else the
 * default: for the commands that must not load the config (it may not exist yet, and loading a
 * missing default one creates it).
 */
export function environmentDataDir(env: Readonly<Record<string, string | undefined>>, cwd: string): string {
  return env.MCPPROXY_DATA_DIR ? expandPath(env.MCPPROXY_DATA_DIR, env, cwd) : defaultDataDir(env);
}

export interface ConfigLocation {
  path: string;
  /** True when no file was found and the default one in the home directory must be created. */
  mustCreate: boolean;
}

/** Lookup order: --config > MCPPROXY_CONFIG_PATH > ./mcp_config.json > ~/.mcpproxy/mcp_config.json. */
export function locateConfig(
  flagPath: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): ConfigLocation {
  const explicit = flagPath ?? env.MCPPROXY_CONFIG_PATH;
  if (explicit) return { path: resolve(cwd, explicit), mustCreate: false };
  const local = join(cwd, "mcp_config.json");
  if (existsSync(local)) return { path: local, mustCreate: false };
  const home = join(defaultDataDir(env), "mcp_config.json");
  return { path: home, mustCreate: !existsSync(home) };
}

/** A path setting: a leading `~` is the home directory, and a relative path is taken from `base`. */
export function expandPath(
  path: string,
  env: Readonly<Record<string, string | undefined>>,
  base: string,
): string {
  if (path === "~" || path.startsWith("~/")) return join(homeDir(env), path.slice(2));
  return isAbsolute(path) ? path : resolve(base, path);
}

/** Where Hugging Face ids are looked up and downloaded to, under the data dir. */
export const MODELS_DIR = "models";
