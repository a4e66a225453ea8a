import { ProxyError } from "../errors.ts";

/**
 * The console's "Add a server" form, as config entries: either the fields (a command and its
 * arguments, or a URL; the names of the variables it gets from the person's environment, as
 * `${NAME}`; HTTP headers), or a client's JSON entry pasted as it is (`{"mcpServers": {…}}`,
 * `{"NAME": {…}}`, or the entry alone, named by the form). What comes out is checked by the same
 * server editor and config loader as any other edit before it is written.
 */
export interface ServerForm {
  name?: string | undefined;
  command?: string | undefined;
  /** One argument a line. */
  args?: string | undefined;
  url?: string | undefined;
  /** Variable names, one a line or separated by spaces or commas. */
  env?: string | undefined;
  /** `Name: value`, one a line. */
  headers?: string | undefined;
  json?: string | undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Keys that make an object a server entry rather than a map of them. */
const ENTRY_KEYS = ["command", "url", "serverUrl", "type", "transport"];

export function entriesOfForm(form: ServerForm): Record<string, Record<string, unknown>> {
  const name = form.name?.trim() ?? "";
  if (form.json?.trim()) return pastedEntries(form.json, name);
  if (!name) throw new ProxyError("USAGE", "Give the server a name.");
  const command = form.command?.trim() ?? "";
  const url = form.url?.trim() ?? "";
  if ((command === "") === (url === ""))
    throw new ProxyError("USAGE", "Give either a command (a local server) or a URL (a remote one).");
  const names = (form.env ?? "").split(/[\s,]+/).filter((word) => word !== "");
  for (const variable of names)
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable))
      throw new ProxyError("USAGE", `${JSON.stringify(variable)} is not a variable name.`);
  const env = Object.fromEntries(names.map((variable) => [variable, `\${${variable}}`]));
  const headers: Record<string, string> = {};
  for (const line of (form.headers ?? "").split("\n")) {
    if (line.trim() === "") continue;
    const colon = line.indexOf(":");
    if (colon <= 0)
      throw new ProxyError("USAGE", `A header is "Name: value": ${JSON.stringify(line.trim())}.`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  const entry: Record<string, unknown> = command
    ? {
        command,
        args: (form.args ?? "")
          .split("\n")
          .map((arg) => arg.trim())
          .filter((arg) => arg !== ""),
        ...(names.length > 0 ? { env } : {}),
      }
    : { url, ...(Object.keys(headers).length > 0 ? { headers } : {}), ...(names.length > 0 ? { env } : {}) };
  return { [name]: entry };
}

function pastedEntries(text: string, name: string): Record<string, Record<string, unknown>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ProxyError("USAGE", `The pasted entry is not JSON: ${(error as Error).message}`);
  }
  if (!isObject(parsed)) throw new ProxyError("USAGE", "The pasted entry must be a JSON object.");
  const section = isObject(parsed.mcpServers)
    ? parsed.mcpServers
    : isObject(parsed.servers)
      ? parsed.servers
      : undefined;
  const map: Record<string, unknown> =
    section ?? (ENTRY_KEYS.some((key) => key in parsed) ? { [name]: parsed } : parsed);
  const entries: Record<string, Record<string, unknown>> = {};
  for (const [key, entry] of Object.entries(map)) {
    if (!key) throw new ProxyError("USAGE", "The pasted entry has no name: give it one in the form.");
    if (!isObject(entry))
      throw new ProxyError("USAGE", `${JSON.stringify(key)}: a server entry must be an object.`);
    entries[key] = entry;
  }
  if (Object.keys(entries).length === 0) throw new ProxyError("USAGE", "The pasted JSON holds no server.");
  return entries;
}
