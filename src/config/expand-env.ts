/**
 * `${VAR}` and `${VAR:-default}` expansion in config strings. A missing variable without a default
 * is reported with the path of the string that needs it, so the user knows which server to fix.
 */
export interface ExpansionProblem {
  path: string;
  message: string;
  /** Where the bad value came from, so the error blames the right thing (default: the file). */
  source?: "file" | "env" | "flag";
}

const VS_CODE_INPUT = /\$\{input:([^}]*)\}/;

const PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

function expandString(
  value: string,
  env: Readonly<Record<string, string | undefined>>,
  path: string,
  problems: ExpansionProblem[],
): string {
  // Most strings hold no reference at all: with 20,000 servers the regexes below were a good part of the load.
  if (!value.includes("${")) return value;
  const input = VS_CODE_INPUT.exec(value);
  if (input) {
    problems.push({
      path,
      message:
        `VS Code input variables (\${input:…}) are not supported: put the value of "${input[1]}" in an environment ` +
        "variable and write ${NAME} (`mcpproxy import` does this), or write the value itself",
    });
  }
  return value.replace(PATTERN, (whole, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined && found !== "") return found;
    if (fallback !== undefined) return fallback;
    if (found === "") return "";
    problems.push({ path, message: unsetVariableMessage(name) });
    return whole;
  });
}

/**
 * What to do about a variable that is not set, wherever it is used: it is read from the environment
 * mcpproxy starts with, which for a client app (Claude Desktop, Cursor) is not the shell's.
 */
function unsetVariableMessage(name: string): string {
  return (
    `environment variable ${name} is not set: set it where mcpproxy starts (export it in your shell, or add it ` +
    `to the "env" of mcpproxy's entry in the MCP client that launches it), write the value in place of ` +
    `\${${name}}, or give a default: \${${name}:-…}`
  );
}

/**
 * The environment with every unset variable standing in as "0", as PLACEHOLDER_ENV does for all:
 * the shape of an entry that lacks a variable is still checked, and its values are never used.
 */
export function withPlaceholders(
  env: Readonly<Record<string, string | undefined>>,
): Readonly<Record<string, string | undefined>> {
  return new Proxy({}, { get: (_target, key) => (typeof key === "string" ? (env[key] ?? "0") : undefined) });
}

/** Expands every string inside `value` (objects and arrays walked), returning a new value. */
export function expandDeep(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  path: string,
  problems: ExpansionProblem[],
): unknown {
  if (typeof value === "string") return expandString(value, env, path, problems);
  if (Array.isArray(value)) return value.map((item, i) => expandDeep(item, env, `${path}.${i}`, problems));
  if (value !== null && typeof value === "object") {
    // fromEntries defines own keys: a key such as `__proto__` stays a key rather than a prototype.
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, expandDeep(item, env, `${path}.${key}`, problems)]),
    );
  }
  return value;
}

/**
 * Stands in for the environment while an entry an agent wrote awaits approval: its `${VAR}` are
 * not read from the proxy's environment (an agent must not learn or receive the person's
 * variables), yet the entry is checked for its shape. Every variable reads as "0", which fits a
 * host, a port, a path or an argument alike.
 */
export const PLACEHOLDER_ENV: Readonly<Record<string, string | undefined>> = new Proxy(
  {},
  { get: (_target, key) => (typeof key === "string" ? "0" : undefined) },
);
