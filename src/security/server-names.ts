import { invisibleCharacters, withoutInvisible } from "./hidden-characters.ts";

/**
 * What a server may be called. A name is a key of the config's server map, a prefix of public tool
 * names (`server__tool`), part of `mcpproxy approve SERVER/TOOL` and of file names in the data dir,
 * so it may not hold `/`, control characters or line breaks, nor invisible characters: zero-width
 * ones would make two names look alike, and bidi controls (U+202A–202E, U+2066–2069) would make
 * what `approve` shows around the name display in another order than it runs. Nor may it be a
 * name that objects already have (`__proto__`, `constructor`: JSON readers and plain maps treat
 * those specially) or a built-in tool's name.
 */
export const RESERVED_SERVER_NAMES: ReadonlySet<string> = new Set([
  ...Object.getOwnPropertyNames(Object.prototype),
  "prototype",
  // The proxy's own tools (server/tools/builtin-tools.ts RESERVED_TOOL_NAMES; a test keeps the two in step).
  "retrieve_tools",
  "call_tool",
  "upstream_servers",
  "tools_stat",
  "get_tool_alternatives",
  "read_result",
  // mcpproxy://results/<id> is a kept large result (server/results/result-spill.ts), never a server's resource.
  "results",
]);

const MAX_NAME_LENGTH = 100;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Why a server name cannot be used, or undefined when it can. */
export function serverNameProblem(name: string): string | undefined {
  if (name.trim() === "") return "a server name must not be empty";
  if (name.length > MAX_NAME_LENGTH) return `a server name must be at most ${MAX_NAME_LENGTH} characters`;
  if (name.includes("/")) return "a server name must not contain /";
  if (CONTROL.test(name)) return "a server name must not contain control characters or line breaks";
  const hidden = invisibleCharacters(name);
  if (hidden.length > 0)
    return `a server name must not contain invisible or text-direction characters (${hidden.join(", ")})`;
  // Any case: a URI's host is case-insensitive, so mcpproxy://Results/ could be read as results.
  if (RESERVED_SERVER_NAMES.has(name) || name.toLowerCase() === "results")
    return `"${name}" is reserved and cannot name a server`;
  return undefined;
}

/** A name that can be used, made from one that cannot (an import from another client's file). */
export function usableServerName(name: string): string {
  const replaced = [...withoutInvisible(name)]
    .map((char) => (char === "/" || CONTROL.test(char) ? "-" : char))
    .join("");
  const usable = replaced.replace(/-{2,}/g, "-").trim().slice(0, MAX_NAME_LENGTH) || "server";
  return RESERVED_SERVER_NAMES.has(usable) || usable.toLowerCase() === "results"
    ? `${usable}-server`
    : usable;
}
