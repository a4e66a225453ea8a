import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join } from "node:path";
import { closestKey } from "../config/known-keys.ts";
import type { ServerConfig, StdioServerConfig } from "../config/parse-server.ts";
import { describeError } from "../errors.ts";
import { maskUrl } from "../security/mask-url.ts";

/**
 * What `doctor` says to do about a server that does not start, by what kind of server it is and
 * what went wrong. "Run its command by hand" is advice for a stdio server only: a URL server has no
 * command, and a command given as a full path that does not exist needs the path fixed, not PATH.
 */

/** Why a stdio server's command cannot be run, before trying it; undefined when it can be. */
export function missingCommand(
  server: StdioServerConfig,
  env: Readonly<Record<string, string | undefined>>,
): { detail: string; fix: string } | undefined {
  const command = server.command;
  if (!isAbsolute(command)) {
    if (Bun.which(command, { PATH: env.PATH ?? "" })) return undefined;
    return {
      detail: `its command "${command}" is not on PATH`,
      fix: "install it, or give its full path in the config",
    };
  }
  if (existsSync(command)) {
    return statSync(command).isDirectory()
      ? { detail: `its command ${command} is a directory`, fix: "give the path of the program in it" }
      : undefined;
  }
  const dir = dirname(command);
  if (!existsSync(dir)) {
    return {
      detail: `its command ${command} does not exist: there is no directory ${dir}`,
      fix: "fix the path in the config (a typo?), or install the program there",
    };
  }
  let nearest: string | undefined;
  try {
    nearest = closestKey(basename(command), readdirSync(dir));
  } catch {
    // An unreadable directory: no suggestion.
  }
  return {
    detail: `its command ${command} does not exist`,
    fix: nearest
      ? `fix the path in the config: did you mean ${join(dir, nearest)}?`
      : "fix the path in the config (a typo?), or install the program there",
  };
}

/** What to do about a server that failed to connect, from the error it failed with. */
export function failureFix(server: ServerConfig, error: unknown): string {
  const text = describeError(error);
  const slow = /did not finish initialize and tools\/list within/.test(text);
  if (server.transport !== "stdio") {
    const url = maskUrl(server.url);
    if (slow)
      return `it did not answer in time: check that ${url} answers (\`curl -i ${url}\`), or raise timeoutMs`;
    if (/ECONNREFUSED|Unable to connect/i.test(text))
      return `nothing listens at ${url}: start that server, or fix the host and port in its url`;
    if (/ENOTFOUND|EAI_AGAIN|getaddrinfo/i.test(text))
      return "the host name in its url does not resolve: check it for a typo, and the network or VPN";
    if (/certificate|SSL|TLS|self.signed/i.test(text))
      return "its TLS certificate is not trusted: behind a company proxy, set NODE_EXTRA_CA_CERTS to your CA file";
    const status = Number(/answered HTTP (\d{3})/.exec(text)?.[1]);
    if (status === 401 || status === 403)
      return `it refused the request (HTTP ${status}): check its headers (Authorization), or \`mcpproxy auth login ${server.name}\``;
    if (status === 404)
      return "nothing at that path: check the path of its url (often /mcp, or /sse for a legacy SSE server)";
    if (status >= 400 && status < 600)
      return `that url does not speak MCP over ${server.transport === "sse" ? "SSE" : "streamable HTTP"}: check its url, and its "type" ("sse" for a legacy SSE server)`;
    return `check that ${url} answers (\`curl -i ${url}\`) and its headers, or raise timeoutMs if it is slow`;
  }
  const isNpx = /^npx(\.cmd)?$/.test(server.command.split(/[\\/]/).pop() ?? "");
  if (isNpx)
    return "npx downloads the package on first start: check the network (or run the npx command once by hand), or raise timeoutMs";
  if (/EACCES|ENOEXEC/.test(text))
    return `${server.command} is not a program this user can run: make it executable (chmod +x), or name its interpreter as the command`;
  if (slow)
    return "it did not answer in time: run its command by hand to see what it waits for, or raise timeoutMs";
  return "run its command by hand to see why it fails, or raise timeoutMs if it is slow to start";
}
